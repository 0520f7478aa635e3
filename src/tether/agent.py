"""Agent: configuration plus the invoke / stream / cancel entry points (the loop is in loop.py)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from tether._agent_setup import (
    attach_agent_hooks,
    check_scalars,
    install_audit,
    listed,
    resolve_model,
    resolve_store,
    trace_if_configured,
)
from tether._otel import global_tracer_provider
from tether.control.events import AfterInvocation, AgentInitialized, HookEvent
from tether.control.interrupts import Interrupt
from tether.control.middleware import ModelMiddleware, ModelOnion, ToolMiddleware, ToolOnion
from tether.control.registry import HookOrder, HookProvider, HookRegistry
from tether.conversation import Conversation
from tether.errors import AgentBusyError, ConfigurationError, InputError, SessionStateError
from tether.events import FinalResult, StreamEvent, StreamObserver
from tether.execution import Execution
from tether.limits import DEFAULT_LIMITS, IterationBudget, Limits
from tether.loop import run_invocation
from tether.messages import JSONValue, Message
from tether.models.base import Model
from tether.result import Result
from tether.session_ids import validate_session_id
from tether.tools import Tool, ToolSource
from tether.tools.context import CancelSignal
from tether.tools.source import expand_tools, tool_sources
from tether.tools.threads import ToolThreads

if TYPE_CHECKING:
    from agent_hooks import HostRegistry

    from tether.control.agent_hooks import AgentHooksHost
    from tether.control.audit import ApprovalPolicy
    from tether.control.interventions import ConfirmCallback, InterventionHandler
    from tether.durable import Store
    from tether.run_state import RunState
    from tether.session import SessionJournal
    from tether.structured import OutputSpec

Prompt: TypeAlias = str | Message | Sequence[Message]
E = TypeVar("E", bound=HookEvent)
Middleware: TypeAlias = ModelMiddleware | ToolMiddleware

_thread_state = threading.local()
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}")


class Agent:
    """A tool-using agent: configuration plus one :class:`Conversation`, one invocation at a time.

    Invoke it with ``agent(prompt)`` / ``agent.run(prompt)`` (sync),
    ``await agent.invoke_async(prompt)`` or ``async for event in agent.stream(prompt)``;
    all three drive the same loop. The conversation is kept across invocations
    until :meth:`reset`.
    """

    def __init__(
        self,
        model: Model | str | None = None,
        *,
        tools: Iterable[Tool | Callable[..., Any] | ToolSource] = (),
        system_prompt: str | None = None,
        hooks: Iterable[HookProvider] = (),
        interventions: Iterable[InterventionHandler] = (),
        middleware: Iterable[Middleware] = (),
        limits: Limits | None = DEFAULT_LIMITS,
        budget: IterationBudget | None = None,
        confirm: ConfirmCallback | None = None,
        session_id: str | None = None,
        store: Store | Literal["default"] | None = "default",
        state: dict[str, Any] | None = None,
        agent_hooks: AgentHooksHost | Iterable[Any] | None = None,
        approvals: ApprovalPolicy | None = None,
        execution: Execution | None = None,
        name: str | None = None,
    ) -> None:
        self.name = name
        check_scalars(system_prompt, budget, confirm, approvals)
        self.model: Model = resolve_model(model)
        items = listed("tools", tools, "a list of tools (functions, @tool Tools, MCP servers)")
        # names are unique, or it raises; an MCP server connects when a run needs it
        self.tools: list[Tool] = expand_tools(items, connect=False)
        self.tool_sources: list[ToolSource] = tool_sources(items)
        """Sources of several tools (e.g. MCP servers), closed by :meth:`close`."""
        self.tool_map: dict[str, Tool] = {t.name: t for t in self.tools}
        self.tool_specs: list[dict[str, Any]] = [t.spec() for t in self.tools]
        self.system_prompt = system_prompt
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigurationError(
                f"limits= takes a Limits(...) or None, got {type(limits).__name__}"
            )
        # The default cap of model calls; a budget, when given, is the cap instead.
        self.limits: Limits | None = (
            None if limits is DEFAULT_LIMITS and budget is not None else limits
        )
        """This agent's ceilings per invocation: by default ``Limits(turns=90)``
        (``DEFAULT_MAX_TURNS``) unless a budget is given; ``limits=None`` runs unbounded."""
        self.budget = budget
        self.confirm = confirm
        if execution is not None and not isinstance(execution, Execution):
            raise ConfigurationError(
                f"execution= takes an Execution(...), got {type(execution).__name__}"
            )
        self.execution = execution or Execution()
        self._explicit_session = session_id is not None
        if session_id is not None:
            validate_session_id(session_id)
        if state is not None and not isinstance(state, dict):
            raise ConfigurationError(f"state= takes a dict, got {type(state).__name__}")
        self.conversation = Conversation(session_id or _new_session_id())
        if state is not None:
            self.conversation.state = state
        self.store: Store | None = resolve_store(store, session_id)
        if self.store is None:
            self.conversation.synced_version = 0
        self.hooks = HookRegistry()
        if self.tool_sources:  # an MCP server's tools may change: take them up per model call
            from tether.tools.refresh import watch_sources

            watch_sources(self, items)
        self._set_middleware(
            listed("middleware", middleware, "a list of ModelMiddleware / ToolMiddleware")
        )
        self._executor: ToolThreads | None = None
        self._lock = threading.Lock()
        self._cancel = CancelSignal()
        self.observers: list[StreamObserver] = []
        """Called with every stream event of a run before it is yielded (tether.observe)."""
        providers = listed("hooks", hooks, "a list of HookProvider objects")
        for provider in providers:
            if _is_agent_hooks_host(provider):
                raise ConfigurationError(
                    "an AgentHooksHost was passed in hooks=[...]; attach AGENT-HOOKS "
                    "interceptors through agent_hooks= (one host per agent)"
                )
            self.hooks.add_provider(provider)
        handlers = listed("interventions", interventions, "a list of InterventionHandler objects")
        self.interventions: tuple[InterventionHandler, ...] = tuple(handlers)
        """The policy handlers this agent runs (a sub-agent adds its parent's)."""
        if handlers:
            from tether.control.interventions import InterventionRunner

            self.hooks.add_provider(InterventionRunner(handlers))
        self.agent_hooks = attach_agent_hooks(self, agent_hooks)
        """The AGENT-HOOKS-0.1 host (a HookProvider) or None."""
        buffer = self.execution.buffer_output
        self.buffer_output = self.agent_hooks is not None if buffer is None else buffer
        self.audit_sink = install_audit(self, approvals)
        self._tracing_unset = True
        """No run has started yet while a global tracer provider was set (see _open)."""
        self.hooks.emit_sync(AgentInitialized(self))

    # -- identity ---------------------------------------------------------------------

    _name: str | None = None

    @property
    def name(self) -> str | None:
        """This agent's name (None: unnamed): ``gen_ai.agent.name`` and the span name
        ``invoke_agent {name}`` in traces, the AGENT-HOOKS ``agent.id``, and each run's
        start in the session journal (the timeline's "run started" row)."""
        return self._name

    @name.setter
    def name(self, name: str | None) -> None:
        if name is not None and (not isinstance(name, str) or not _NAME.fullmatch(name)):
            raise ConfigurationError(
                "an agent's name is 1 to 64 letters, digits, spaces and '_.:-', starting with "
                f"a letter or digit, got {str(name)[:80]!r}"
            )
        self._name = name

    # -- the conversation (views of self.conversation) -------------------------------

    @property
    def session_id(self) -> str:
        """The session this agent's conversation belongs to."""
        return self.conversation.session_id

    @property
    def path(self) -> str:
        """This agent's path in an agent tree (``researcher#c1/coder#c4``; ``""`` at the
        top): every hook event carries it as ``event.agent.path``."""
        from tether.agents.inherit import agent_path

        return agent_path(self)

    @property
    def messages(self) -> list[Message]:
        """The conversation so far."""
        return self.conversation.messages

    @messages.setter
    def messages(self, messages: list[Message]) -> None:
        self.conversation.messages = messages
        self.conversation.compaction = None  # it described the replaced list
        self.conversation.estimate = None

    @property
    def state(self) -> dict[str, Any]:
        """The session state that tools read and write through ``ToolContext.state``."""
        return self.conversation.state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        self.conversation.state = state

    @property
    def answers(self) -> dict[str, JSONValue]:
        """Answers given to interrupts of this session, by interrupt id."""
        return self.conversation.answers

    @property
    def last_result(self) -> Result | None:
        """The Result of the last invocation or resume (None before the first)."""
        return self.conversation.last_result

    @classmethod
    def from_declaration(
        cls, document: Any, registry: HostRegistry | None = None, **options: Any
    ) -> Agent:
        """An Agent whose interceptors come from an AGENT-HOOKS host declaration
        (``agent-hooks.declaration.json``: a path, JSON text or parsed value), resolved
        against ``registry`` (default: tether's, see ``tether.control.agent_hooks``).
        A refused document raises the loader's ``DeclarationError`` before any run."""
        from tether.control.agent_hooks import AgentHooksHost

        if "agent_hooks" in options:
            raise ConfigurationError(
                "Agent.from_declaration(...) attaches the declaration's interceptors; "
                "do not pass agent_hooks= as well (an agent takes one AGENT-HOOKS host)"
            )
        return cls(agent_hooks=AgentHooksHost.from_declaration(document, registry), **options)

    # -- configuration ---------------------------------------------------------------

    def _set_middleware(self, middleware: list[Middleware]) -> None:
        model_mw = [m for m in middleware if isinstance(m, ModelMiddleware)]
        tool_mw = [m for m in middleware if isinstance(m, ToolMiddleware)]
        bad = [m for m in middleware if not isinstance(m, ModelMiddleware | ToolMiddleware)]
        if bad:
            raise ConfigurationError(
                f"middleware=[...] takes ModelMiddleware or ToolMiddleware instances, got {bad[0]!r}"
            )
        from tether.modelcall import stream_model
        from tether.toolcalls import invoke_tool

        self.model_onion: ModelOnion | None = (
            ModelOnion(model_mw, lambda request: stream_model(self.model, request))
            if model_mw
            else None
        )
        self.tool_onion: ToolOnion | None = (
            ToolOnion(tool_mw, lambda request: invoke_tool(self._active_run(), request))
            if tool_mw
            else None
        )

    def _active_run(self) -> RunState:
        run = self.conversation.run
        if run is None:
            raise SessionStateError(
                f"tool middleware of session {self.session_id} was called outside a run"
            )
        return run

    def on(
        self, event_type: type[E], order: int = HookOrder.DEFAULT
    ) -> Callable[[Callable[[E], Any]], Callable[[E], Any]]:
        """Decorator: ``@agent.on(BeforeToolCall)`` registers the function as a hook."""

        def register(callback: Callable[[E], Any]) -> Callable[[E], Any]:
            self.hooks.add(event_type, callback, order)
            return callback

        return register

    @property
    def executor(self) -> Executor:
        """The bounded thread pool that runs sync tools (created on first use)."""
        if self._executor is None:
            self._executor = ToolThreads(self.execution.max_concurrency)
        return self._executor

    # -- invocation -------------------------------------------------------------------

    async def stream(
        self, prompt: Prompt, *, output_type: Any = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """Run one invocation, yielding typed events; the last is ``FinalResult``.

        With ``output_type`` (a pydantic model, dataclass, TypedDict...) the final answer
        is validated into ``Result.output`` (see ``tether.structured``).
        """
        messages = _prompt_messages(prompt)
        spec = _output_spec(output_type)
        journal = await self._open()
        try:
            self._refuse_if_suspended()
            messages = self._expect(spec, messages)
            events = self._chain(
                run_invocation(self, messages, self._cancel, journal=journal), journal
            )
            observers = self.observers
            async with contextlib.aclosing(events) as stream:
                async for event in stream:
                    for observe in observers:
                        observe(event)
                    yield event
        finally:
            await self._close(journal)

    async def invoke_async(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        """Run one invocation and return its Result (raises ``RunError`` on stop reason error).

        ``output_type``: see :meth:`stream`.
        """
        messages = _prompt_messages(prompt)
        spec = _output_spec(output_type)
        journal = await self._open()
        result: Result | None = None
        try:
            self._refuse_if_suspended()
            messages = self._expect(spec, messages)
            # No generator layer for AfterInvocation follow-ups here: they are started
            # in this loop (the stream paths chain them through follow_ups instead).
            events = run_invocation(self, messages, self._cancel, journal=journal, watched=False)
            rounds = 0
            observers = self.observers
            while True:
                try:
                    async for event in events:
                        for observe in observers:
                            observe(event)
                        if type(event) is FinalResult:
                            result = event.result
                finally:
                    await events.aclose()
                if self.conversation.follow_up is None:
                    break
                from tether.follow_up import next_prompt

                follow = next_prompt(self, rounds, _prompt_messages)
                if follow is None:
                    break
                rounds += 1
                events = run_invocation(self, follow, self._cancel, journal=journal, watched=False)
        finally:
            await self._close(journal)
        assert result is not None
        return result

    async def _open(self) -> SessionJournal | None:
        """Take the agent's lock and, with a store, the session's lease and latest state."""
        if not self._lock.acquire(blocking=False):
            raise AgentBusyError(
                f"agent (session {self.session_id}) is already running an invocation; an agent runs "
                "one invocation at a time: wait for it to finish, or use another Agent for parallel work"
            )
        self._cancel = CancelSignal()
        try:
            # Tracing follows the provider at run time, not at construction (design.md
            # §11): one flag test per run once decided, a dict lookup while OTel is absent.
            if self._tracing_unset and global_tracer_provider() is not None:
                self._tracing_unset = False
                trace_if_configured(self)
            if self.store is None:
                return None
            from tether.persistence import open_session

            return await open_session(self)
        except BaseException:
            self._lock.release()
            raise

    async def _close(self, journal: SessionJournal | None) -> None:
        try:
            if journal is not None:
                from tether.persistence import close_session

                await close_session(self, journal)
        finally:
            self._lock.release()

    def _chain(
        self, events: AsyncGenerator[StreamEvent, None], journal: SessionJournal | None
    ) -> AsyncGenerator[StreamEvent, None]:
        """``events``, then the invocations AfterInvocation hooks ask for (``resume``)."""
        if not self.hooks.has(AfterInvocation):
            return events
        from tether.follow_up import follow_ups

        return follow_ups(self, events, self._cancel, journal, _prompt_messages)

    def _expect(self, spec: OutputSpec | None, messages: list[Message]) -> list[Message]:
        """Set this invocation's output type; with one, the prompt asks for it."""
        self.conversation.follow_up = None
        self.conversation.output_spec = spec
        return messages if spec is None else [*messages, spec.instruction()]

    def _refuse_if_suspended(self) -> None:
        pending = self.conversation.suspension
        if pending is not None:
            raise SessionStateError(
                f"session {self.session_id} is suspended ({pending.stop_reason}, "
                f"{len(pending.interrupts)} interrupt(s) pending): call agent.resume(...) to "
                "continue it, or agent.reset() to start a new conversation"
            )

    # -- interrupts and resume ---------------------------------------------------------

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts waiting for an answer (empty unless the session is suspended)."""
        suspension = self.conversation.suspension
        if suspension is None:
            return []
        return [i for i in suspension.interrupts if i.id not in self.answers]

    def pause(self) -> None:
        """Stop the running invocation at the next boundary with stop reason ``paused``.

        Thread-safe; a paused session continues with ``agent.resume()``.
        """
        run = self.conversation.run
        if run is not None:
            run.paused = True

    async def resume_stream(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Answer pending interrupts (id -> JSON value) and continue the suspended run.

        Works in the same process or, with a store, in a new one
        (``Agent(..., store=..., session_id=X).resume(...)``); ``resume()`` with no
        answers also recovers a session whose process died. Unknown ids, a session
        that is not suspended, and non-JSON answers are errors that change nothing.
        Ids left unanswered stay pending (the result is again ``interrupt``). Only
        the interrupted calls re-run; the model is not called again for that turn.
        ``output_type``: the invocation's output type (needed again in a new process).
        ``decided_by``: who answered, recorded on the approval rows the answers decide
        (default ``user@host (agent.resume)``); an answer to a row the inbox decided
        otherwise is refused.
        """
        from tether.resume import resume_events

        spec = _output_spec(output_type)
        journal = await self._open()
        try:
            if spec is not None:
                self.conversation.output_spec = spec
            self.conversation.follow_up = None
            events = self._chain(
                resume_events(self, responses or {}, self._cancel, journal, decided_by),
                journal,
            )
            async with contextlib.aclosing(events) as events:
                observers = self.observers
                async for event in events:
                    for observe in observers:
                        observe(event)
                    yield event
        finally:
            await self._close(journal)

    async def resume_async(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> Result:
        """:meth:`resume_stream` driven to its Result."""
        result: Result | None = None
        stream = self.resume_stream(responses, output_type=output_type, decided_by=decided_by)
        async for event in stream:
            if type(event) is FinalResult:
                result = event.result
        assert result is not None
        return result

    def resume(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> Result:
        """Synchronous :meth:`resume_async`."""
        return _run_sync(
            self.resume_async(responses, output_type=output_type, decided_by=decided_by)
        )

    def run(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        """Synchronous :meth:`invoke_async` (works inside a running event loop too)."""
        return _run_sync(self.invoke_async(prompt, output_type=output_type))

    def steer(self, text: str) -> None:
        """Add guidance to the running invocation without stopping it (thread-safe).

        Delivered at the next boundary, before the next model call (after the tool
        results of the current batch), as a user message: journaled like any message
        and announced by a ``Steered`` stream event. Given between invocations, it
        joins the next one before its first model call.
        """
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"agent.steer() takes a non-empty str, got {text!r}")
        self.conversation.steering.append(text)

    def as_tool(
        self,
        name: str,
        description: str | None = None,
        *,
        output_type: Any = None,
    ) -> Tool:
        """This agent as a tool of another agent (see ``tether.agents.as_tool``)."""
        from tether.agents import as_tool

        return as_tool(self, name=name, description=description, output_type=output_type)

    __call__ = run

    def cancel(self) -> None:
        """Stop the running invocation at the next check (thread-safe, idempotent).

        Checked before each model call and each tool; running async tools are
        cancelled, running sync tools see ``ToolContext.cancel``; unanswered tool
        calls get a "cancelled" result. Stop reason: ``cancelled``.
        """
        self._cancel.set()
        run = self.conversation.run
        if run is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop means the run is over
                run.loop.call_soon_threadsafe(run.cancel_tasks)

    def reset(self) -> None:
        """Start a fresh conversation (new session id unless one was given, empty state)."""
        if self._lock.locked():
            raise AgentBusyError(f"agent (session {self.session_id}) cannot reset while it runs")
        session_id = self.session_id if self._explicit_session else _new_session_id()
        self.conversation.clear(session_id)

    def close(self) -> None:
        """Release the tool thread pool and close tool sources such as MCP connections
        (the agent stays usable: both come back on first use)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        for source in self.tool_sources:
            source.close()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        named = "" if self._name is None else f"name={self._name!r}, "
        return f"Agent({named}model={self.model.name!r}, tools={[t.name for t in self.tools]}, session_id={self.session_id!r})"


def _run_sync(coroutine: Coroutine[Any, Any, Result]) -> Result:
    """Drive ``coroutine`` to its Result from sync code (inside a running loop: on a thread).

    The loop check happens outside any ``except`` block, so an error from the run
    carries no chained "no running event loop" context.
    """
    if _running_loop() is None:
        runner: asyncio.Runner | None = getattr(_thread_state, "runner", None)
        if runner is None:
            runner = _thread_state.runner = asyncio.Runner()
        return runner.run(coroutine)
    with ThreadPoolExecutor(1, thread_name_prefix="tether-sync") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _is_agent_hooks_host(provider: object) -> bool:
    host_type = _agent_hooks_host_type()
    return host_type is not None and isinstance(provider, host_type)


def _agent_hooks_host_type() -> type | None:
    """AgentHooksHost when its module is loaded (a host object exists only then)."""
    module = sys.modules.get("tether.control.agent_hooks.host")
    return getattr(module, "AgentHooksHost", None)


def _new_session_id() -> str:
    return os.urandom(16).hex()


def _output_spec(output_type: Any) -> OutputSpec | None:
    if output_type is None:
        return None
    from tether.structured import OutputSpec

    return OutputSpec(output_type)


def _prompt_messages(prompt: Prompt) -> list[Message]:
    if isinstance(prompt, str):
        return [Message.user(prompt)]
    if isinstance(prompt, Message):
        return [prompt]
    if isinstance(prompt, Sequence) and all(isinstance(m, Message) for m in prompt):
        return [m for m in prompt if isinstance(m, Message)]
    raise InputError(
        f"a prompt is a str, a Message or a list of Messages, got {type(prompt).__name__}"
    )
