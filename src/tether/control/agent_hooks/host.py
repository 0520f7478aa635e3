"""The AGENT-HOOKS-0.1 host: a HookProvider that runs the SDK's emitter at tether's hook points.

Point -> hook event (all at ``HookOrder.SDK_LAST``, so interceptors judge exactly
what the loop then uses): agent_startup + input -> BeforeInvocation,
pre_model_call -> BeforeModelCall, post_model_call -> AfterModelCall,
pre_tool_call -> BeforeToolCall, post_tool_call -> AfterToolCall,
output -> BeforeOutput, agent_shutdown -> AfterInvocation. The emitter
(``agent_hooks.InterceptionEmitter``) does dispatch, composition, approvals,
identities and records; this module attaches the host and keeps its sessions,
:mod:`tether.control.agent_hooks.points` translates each point and writes the verdict back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from agent_hooks import (
    AgentContext,
    ApprovalResolver,
    CompositionConfig,
    EnforcementMode,
    HostRegistry,
    IdentityProvider,
    InterceptionEmitter,
    InterceptionRecord,
)

from tether.control.agent_hooks import points
from tether.control.agent_hooks import translate as wire
from tether.control.agent_hooks.interceptors import Bounded, as_interceptor
from tether.control.agent_hooks.points import HookSession
from tether.control.agent_hooks.records import RecordSink, RecordTrail
from tether.control.events import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
)
from tether.control.registry import HookOrder, HookRegistry
from tether.errors import ConfigurationError, SessionStateError

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef

MAX_BUFFERED_RECORDS = 1000
"""Bound on the emitter's in-memory records (code path; every record also goes to the sinks)."""


class AgentHooksHost:
    """Runs AGENT-HOOKS-0.1 interceptors through an ``InterceptionEmitter`` on tether's loop.

    Build it from interceptors (a list, or a name -> interceptor mapping; what
    ``Agent(agent_hooks=[...])`` does) or around a configured emitter
    (``AgentHooksHost(emitter=...)``, :meth:`from_declaration`), and attach it with
    ``Agent(agent_hooks=host)``. A host serves one agent: attaching it to a second
    one is refused (AGENT-HOOKS hosts refuse stacked bundles).
    One AGENT-HOOKS session per invocation, unless the caller owns one
    (:meth:`start_session` / :meth:`end_session`) spanning several invocations.
    """

    def __init__(
        self,
        interceptors: Iterable[Any] | Mapping[str, Any] | None = None,
        *,
        emitter: InterceptionEmitter | None = None,
        mode: str = "enforce",
        composition: CompositionConfig | None = None,
        timeout: float | None = 5.0,
        approval_resolver: ApprovalResolver | None = None,
        identity_provider: str | IdentityProvider | None = "jcs-sha256",
        record_sink: RecordSink | None = None,
        tool_seam_host_error: str = "terminate",
    ) -> None:
        if tool_seam_host_error not in POSTURES:
            raise ConfigurationError(
                "AgentHooksHost(tool_seam_host_error=...) must be 'terminate' or 'continue', "
                f"got {tool_seam_host_error!r}"
            )
        self.tool_seam_host_error = tool_seam_host_error
        """What a ``host_error:*`` deny (or a transform that cannot be applied) at
        pre_tool_call / post_tool_call does: ``terminate`` stops the run ``blocked`` once the
        batch settles (fail closed, the default); ``continue`` gives the model a denied
        tool result and goes on (AGENT-HOOKS §6.2 allows both)."""
        if emitter is None:
            try:
                enforcement = EnforcementMode(mode)
            except ValueError:
                raise ConfigurationError(
                    f"AgentHooksHost(mode=...) must be 'enforce' or 'evaluate_only', got {mode!r}"
                ) from None
            if timeout is not None and not timeout > 0:
                raise ConfigurationError(f"timeout must be a positive number, got {timeout!r}")
            try:
                emitter = InterceptionEmitter(
                    mode=enforcement,
                    resolver=approval_resolver,
                    timeout=timeout,
                    composition=composition,
                    identity_provider=identity_provider,
                )
            except (TypeError, ValueError) as exc:
                raise ConfigurationError(f"AGENT-HOOKS configuration refused: {exc}") from exc
            named: Iterable[tuple[str | None, Any]] = (
                interceptors.items()
                if isinstance(interceptors, Mapping)
                else ((None, item) for item in interceptors or ())
            )
            for given, item in named:
                interceptor = as_interceptor(item)
                name = given if given is not None else getattr(interceptor, "name", None)
                if timeout is not None:
                    interceptor = Bounded(interceptor, timeout)
                emitter.register(interceptor, name=name if isinstance(name, str) else None)
            emitter.set_max_records(MAX_BUFFERED_RECORDS)  # caller-owned sessions never drain
        elif interceptors is not None:
            raise ConfigurationError("pass either interceptors or an emitter, not both")
        self._setup(emitter, RecordTrail(record_sink), None)

    def _setup(
        self, emitter: InterceptionEmitter, trail: RecordTrail, router: _Router | None
    ) -> None:
        self.emitter = emitter
        self.trail = trail
        if router is None:  # the first host of this emitter installs the router
            router = _Router(trail)
            emitter.set_record_sink(router)
        self._router = router
        self._session: HookSession | None = None
        self._owned: HookSession | None = None
        self._wire = wire.WireCache()
        self._attached = False
        self.parent: AgentHooksHost | None = None
        """The host this one was made from with :meth:`child` (None for a root host)."""

    def child(self) -> AgentHooksHost:
        """A host for a sub-agent: the same interceptors and settings (one emitter), with
        AGENT-HOOKS sessions and a record trail of its own (records go to the same
        ``record_sink`` and to the child's journal), so parent and child never mix."""
        host = object.__new__(AgentHooksHost)
        host.tool_seam_host_error = self.tool_seam_host_error
        host._setup(self.emitter, RecordTrail(self.trail.sink), self._router)
        host.parent = self
        return host

    @classmethod
    def from_declaration(
        cls,
        document: Any,
        registry: HostRegistry | None = None,
        *,
        record_sink: RecordSink | None = None,
    ) -> AgentHooksHost:
        """A host whose emitter is built by the SDK's loader from a host declaration
        (a path, JSON text or parsed value); refusals raise ``DeclarationError``."""
        from tether.control.agent_hooks.declaration import emitter_from_declaration

        emitter = emitter_from_declaration(document, registry)
        return cls(emitter=emitter, record_sink=record_sink, tool_seam_host_error=_posture(emitter))

    def register_hooks(self, registry: HookRegistry) -> None:
        if self._attached:
            raise ConfigurationError(
                f"this AgentHooksHost is already attached to an agent; {_ONE_HOST}"
            )
        if registry.agent_hooks_host is not None:  # agent.runtime.hooks.add_provider(second_host)
            raise ConfigurationError(
                f"an AGENT-HOOKS host is already attached to this agent; {_ONE_HOST}"
            )
        self._attached = True
        registry.agent_hooks_host = self
        last = HookOrder.SDK_LAST
        registry.add(BeforeInvocation, self._before_invocation, last)
        registry.add(BeforeModelCall, self._before_model_call, last)
        registry.add(AfterModelCall, self._after_model_call, last)
        registry.add(BeforeToolCall, self._before_tool_call, last)
        registry.add(AfterToolCall, self._after_tool_call, last)
        registry.add(BeforeOutput, self._before_output, last)
        registry.add(AfterInvocation, self._after_invocation, last)

    # -- sessions -------------------------------------------------------------------

    async def start_session(self, agent: AgentRef) -> InterceptionRecord:
        """Open a caller-owned session (emits agent_startup) that the next invocations
        share until :meth:`end_session`. A denied startup blocks those invocations."""
        if self._owned is not None:
            raise SessionStateError("an AGENT-HOOKS session is already open; end it first")
        session = self._owned = HookSession.open(agent, owned=True)
        self._session = session  # points emitted outside a run use it too (tether policy check)
        return await points.startup(session, self._emit, agent)

    async def end_session(self, reason: str = "completed") -> InterceptionRecord:
        """Close the caller-owned session (emits agent_shutdown with ``reason``)."""
        session = self._owned
        if session is None:
            raise SessionStateError("no caller-owned AGENT-HOOKS session is open")
        self._owned = None
        if self._session is session:
            self._session = None
        if session.blocked is not None and reason == "completed":
            reason = "error"
        return await self._emit(session.builder.agent_shutdown(reason=reason))

    async def _emit(self, ctx: AgentContext) -> InterceptionRecord:
        """Run one emission on ``ctx`` (a transform is written into ``ctx["target"]``)."""
        token = _EMITTING.set(self.trail)
        try:
            record = await self.emitter.emit_unchecked(ctx)
        finally:
            _EMITTING.reset(token)
        if self.trail.pending:
            await self.trail.flush()
        return record

    # -- the points -----------------------------------------------------------------

    async def _before_invocation(self, event: BeforeInvocation) -> None:
        agent = event.agent
        run = agent.conversation.run
        self.trail.journal = run.journal if run is not None else None
        session = self._owned
        if session is None:
            session = HookSession.open(agent, owned=False)
            if not event.block:
                await points.startup(session, self._emit, agent)
        self._session = session
        await points.inputs(session, self._emit, event)

    async def _before_model_call(self, event: BeforeModelCall) -> None:
        if self._session is not None:
            await points.pre_model_call(self._session, self._emit, self._wire, event)

    async def _after_model_call(self, event: AfterModelCall) -> None:
        if self._session is not None:
            await points.post_model_call(self._session, self._emit, event)

    async def _before_tool_call(self, event: BeforeToolCall) -> None:
        if self._session is not None:
            posture = self.tool_seam_host_error
            await points.pre_tool_call(self._session, self._emit, event, posture)

    async def _after_tool_call(self, event: AfterToolCall) -> None:
        if self._session is not None:
            posture = self.tool_seam_host_error
            await points.post_tool_call(self._session, self._emit, event, posture)

    async def _before_output(self, event: BeforeOutput) -> None:
        if self._session is not None:
            await points.output(self._session, self._emit, event)

    async def _after_invocation(self, event: AfterInvocation) -> None:
        session, self._session = self._session, None
        try:
            if session is not None and not session.owned:
                await points.shutdown(session, self._emit, event.result.stop_reason)
        finally:
            self.trail.journal = None
            if session is not None and not session.owned:
                self.emitter.take_records()  # delivered to the sinks; keep memory flat


_ONE_HOST = (
    "an agent takes one AGENT-HOOKS host (agent_hooks=...) and a host serves one agent: "
    "build a new AgentHooksHost for each agent"
)

POSTURES = ("terminate", "continue")
_EMITTING: ContextVar[RecordTrail | None] = ContextVar("tether_agent_hooks_trail", default=None)
"""The trail of the host whose emission runs in this context (hosts may share an emitter)."""


class _Router:
    """The emitter's record sink: each record goes to the trail of the host emitting it
    (a parent and its sub-agents share one emitter); the root host's trail otherwise."""

    __slots__ = ("root",)

    def __init__(self, root: RecordTrail) -> None:
        self.root = root

    def __call__(self, record: InterceptionRecord) -> None:
        (_EMITTING.get() or self.root)(record)


def _posture(emitter: InterceptionEmitter) -> str:
    """The tool-seam posture a host declaration states (``continue``, the contract's
    default, when it states none)."""
    declaration = getattr(emitter, "declaration", None)
    configuration = getattr(declaration, "configuration", None) or {}
    posture = (configuration.get("posture") or {}).get("tool_seam_host_error")
    return posture if posture in POSTURES else "continue"
