"""Tracing: the HookProvider (plus stream observer) that turns a run into spans and metrics."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from opentelemetry import metrics, trace
from opentelemetry.trace import Link, NonRecordingSpan, SpanKind, Status, StatusCode

from tether.control.events import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
    PolicyVerdict,
)
from tether.errors import ConfigurationError
from tether.observe import attributes as A
from tether.observe import continuity, logs
from tether.observe import governance as G
from tether.observe import runs as spans
from tether.observe.metrics import Instruments
from tether.observe.quiet import QuietTracer, is_storeless, quiet_instruments
from tether.observe.runs import RunSpans, end_abandoned
from tether.observe.steps import StepSpans

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from tether.agent_ref import AgentRef
    from tether.control.registry import HookRegistry
    from tether.durable.approval_types import Approval
    from tether.governance.masks import Masker
    from tether.result import Result

ResumeMode: TypeAlias = Literal["continue", "link"]
FIRST = -1_000_000
"""Spans open before every other hook (HookOrder.SDK_FIRST is 0) ..."""
LAST = 1_000_000
"""... and close, or record a decision, after every other hook has had its say."""
SCOPE = "tether"
_MAX_SAVED = 1024


_TRACED: weakref.WeakSet[AgentRef] = weakref.WeakSet()
"""Agents some Tracing already watches (instrument() refuses to trace one twice)."""
_TRACERS: weakref.WeakKeyDictionary[AgentRef, Tracing] = weakref.WeakKeyDictionary()


def tool_span(agent: AgentRef, call_id: str) -> Any:
    """The open ``execute_tool`` span of ``agent``'s tool call ``call_id``, or None: the
    parent for work the call does elsewhere (an MCP connection's thread, say)."""
    tracing = _TRACERS.get(agent)
    run = None if tracing is None else tracing._runs.get(id(agent))
    entry = None if run is None else run.tools.get(call_id)
    return None if entry is None else entry.span


class Tracing(StepSpans):
    """Traces and metrics for the agents it is attached to (a HookProvider).

    ``tracer_provider`` / ``meter_provider``: None means the global ones.
    ``capture_content``: record message content, tool arguments and results (redacted
    like the session views); None reads ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``.
    ``resume``: ``"continue"`` (a resumed run's span joins the suspended run's trace) or
    ``"link"`` (it starts a new trace with a link to it). ``agent_name`` names the
    ``invoke_agent`` spans. Pass it in ``Agent(hooks=[...])`` or use :func:`instrument`.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool | None = None,
        resume: ResumeMode = "continue",
        agent_name: str = "tether",
    ) -> None:
        if resume not in ("continue", "link"):
            raise ConfigurationError(
                f"Tracing(resume=...) must be 'continue' (one trace across suspend and resume) "
                f"or 'link' (a new trace linked to the suspended one), got {resume!r}"
            )
        if capture_content is not None and not isinstance(capture_content, bool):
            raise ConfigurationError(
                f"Tracing(capture_content=...) takes True, False or None (None: the "
                f"{A.CAPTURE_ENV} environment variable), got {capture_content!r}"
            )
        if not isinstance(agent_name, str) or not agent_name:
            raise ConfigurationError(
                f"Tracing(agent_name=...) must be a non-empty string, got {agent_name!r}"
            )
        version = release()
        self.tracer = QuietTracer(trace.get_tracer(SCOPE, version, tracer_provider))
        self.instruments = Instruments(metrics.get_meter(SCOPE, version or "", meter_provider))
        quiet_instruments(self.instruments)
        self.capture = A.capture_from_env() if capture_content is None else capture_content
        self.resume = resume
        self.agent_name = agent_name
        self._runs: dict[int, RunSpans] = {}
        self._saved: dict[str, dict[str, Any]] = {}
        self._observed: weakref.WeakSet[AgentRef] = weakref.WeakSet()
        logs.install()

    # -- attaching --------------------------------------------------------------------

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(AgentInitialized, self._initialized, LAST)
        registry.add(BeforeInvocation, self._invocation_start, FIRST)
        registry.add(BeforeInvocation, self._invocation_checked, LAST)
        registry.add(BeforeModelCall, self._model_start, LAST)
        registry.add(AfterModelCall, self._model_end, LAST)
        registry.add(BeforeToolCall, self._tool_start, FIRST)
        registry.add(BeforeToolCall, self._tool_checked, LAST)
        registry.add(AfterToolCall, self._tool_end, LAST)
        registry.add(BeforeOutput, self._output_checked, LAST)
        registry.add(AfterInvocation, self._invocation_end, LAST)
        registry.add(PolicyVerdict, self._policy_verdict, LAST)

    def observe(self, agent: AgentRef) -> None:
        """Watch ``agent``'s stream events (provider retries and fallbacks)."""
        if agent not in self._observed:
            self._observed.add(agent)
            agent.runtime.observers.append(partial(self._stream_event, agent))
            weakref.finalize(agent, self._runs.pop, id(agent), None)
            _TRACED.add(agent)
            _TRACERS[agent] = self
            host = agent.runtime.agent_hooks
            if host is not None:  # tee the host's record sink: verdicts become span events
                trail = host.trail
                trail.sink = partial(self._agent_hooks_record, agent, trail.sink)

    def _initialized(self, event: AgentInitialized) -> None:
        self.observe(event.agent)

    # -- invocation -------------------------------------------------------------------

    async def _invocation_start(self, event: BeforeInvocation) -> None:
        agent = event.agent
        stale = self._runs.pop(id(agent), None)
        if stale is not None:
            end_abandoned(stale, agent)
        state = agent.conversation.run
        journal = state.journal if state is not None and not is_storeless() else None
        resumed = not event.messages  # a resume starts its invocation with no new input
        saved = None
        if resumed:
            saved = self._saved.pop(agent.session_id, None)
            if saved is None and journal is not None:
                saved = await continuity.load(journal.store, agent.session_id, journal.version)
        parent: Context | None = None
        links: list[Link] = []
        remote = continuity.span_context(saved) if saved is not None else None
        calling = _calling_span(agent)
        if calling is not None:  # a sub-agent: under the parent's call, in its trace
            parent = trace.set_span_in_context(calling)
            if remote is not None:
                links.append(Link(remote, {"tether.link": "resumed_from"}))
        elif remote is not None:
            if self.resume == "continue":
                parent = trace.set_span_in_context(NonRecordingSpan(remote))
            else:
                links.append(Link(remote, {"tether.link": "resumed_from"}))
        model = A.first_model(agent.runtime.model).name
        provider = A.provider_of(agent.runtime.model)
        name = agent.name or self.agent_name  # AgentRef.name, else Tracing(agent_name=...)
        attributes: dict[str, Any] = {
            A.OPERATION: "invoke_agent",
            A.AGENT_NAME: name,
            A.CONVERSATION: agent.session_id,
            A.PROVIDER: provider,
            A.REQUEST_MODEL: model,
            "tether.resumed": resumed,
            **A.limit_attributes(agent.runtime.limits),
        }
        if agent.runtime.budget is not None:
            attributes["tether.budget.total"] = agent.runtime.budget.total
        masker = _masker(agent)
        if self.capture and agent.runtime.system_prompt:
            attributes[A.SYSTEM_INSTRUCTIONS] = masker.text(_system(agent.runtime.system_prompt))
        span = self.tracer.start_span(
            f"invoke_agent {name}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=links,
        )
        if saved is not None:
            self.instruments.resumes.add(1, {"tether.resume.mode": self.resume})
            rows: dict[str, Approval] = {}
            if journal is not None:
                rows = await continuity.decided_approvals(journal.store, agent.session_id)
            G.answered(span, saved, agent.conversation.answers, rows)
        logs.current.set((agent.session_id, span))  # this task's records carry the ids
        self._runs[id(agent)] = RunSpans(
            span,
            trace.set_span_in_context(span),
            journal,
            model,
            provider,
            masker,
            resumed,
        )

    async def _count_pending(self, store: Any) -> None:
        pending = await continuity.pending_approvals(store)
        if pending is not None:
            self.instruments.pending = pending

    def _invocation_checked(self, event: BeforeInvocation) -> None:
        run = self._runs.get(id(event.agent))
        if run is not None and event.block:
            reason = run.masker.text(event.block)
            run.span.add_event("tether.invocation.blocked", {"tether.reason": reason})
            self._decided("block", "before_invocation")

    def _output_checked(self, event: BeforeOutput) -> None:
        run = self._runs.get(id(event.agent))
        if run is not None and event.block:
            reason = run.masker.text(event.block)
            run.span.add_event("tether.output.blocked", {"tether.reason": reason})
            self._decided("block", "before_output")

    async def _invocation_end(self, event: AfterInvocation) -> None:
        run = self._runs.pop(id(event.agent), None)
        if run is None:
            return
        logs.current.set(None)
        agent, result = event.agent, event.result
        stop = result.stop_reason
        if run.chat is not None:
            run.chat.set_attribute("tether.stop_reason", stop)
            self._end_chat(run, None, error=None)
        calls = {i.tool_call.id: i for i in result.interrupts if i.tool_call is not None}
        for call_id, open_tool in list(run.tools.items()):
            interrupt = calls.get(call_id)
            status = "interrupted" if interrupt is not None else stop
            if interrupt is not None:
                open_tool.span.add_event("tether.interrupt.raised", G.interrupt_attrs(interrupt))
            open_tool.span.set_attribute("tether.tool.status", status)
            open_tool.span.end()
            spans.tool_closed(agent, call_id)
        run.tools.clear()
        for interrupt in result.interrupts:
            run.span.add_event("tether.interrupt.raised", G.interrupt_attrs(interrupt))
            self.instruments.interrupts.add(1, {"tether.interrupt.source": interrupt.source})
        self._finish_attributes(run, agent, result)
        if stop in ("interrupt", "paused"):
            saved: dict[str, Any] = continuity.traceparent(run.span)
            saved["interrupts"] = [
                {"id": i.id, "source": i.source, "name": i.name} for i in result.interrupts
            ]
            if len(self._saved) >= _MAX_SAVED:
                self._saved.pop(next(iter(self._saved)))
            self._saved[agent.session_id] = saved
            if run.journal is not None:
                await continuity.save(run.journal, saved)
        if run.journal is not None and (run.resumed or stop in ("interrupt", "paused")):
            await self._count_pending(run.journal.store)
        run.span.end()

    def _finish_attributes(self, run: RunSpans, agent: AgentRef, result: Result) -> None:
        span, usage, stop = run.span, result.usage, result.stop_reason
        span.set_attributes(
            {
                "tether.stop_reason": stop,
                A.INPUT_TOKENS: usage.input_tokens,
                A.OUTPUT_TOKENS: usage.output_tokens,
                "tether.usage.model_calls": usage.model_calls,
                "tether.usage.tool_calls": usage.tool_calls,
                "tether.usage.model_retries": usage.model_retries,
                "tether.usage.model_fallbacks": usage.model_fallbacks,
            }
        )
        if usage.cost is not None:
            span.set_attribute(A.COST, float(usage.cost))
        if agent.runtime.budget is not None:
            span.set_attribute("tether.budget.remaining", agent.runtime.budget.remaining)
        if stop.startswith("limit_") or stop in ("budget_exhausted", "cost_limit"):
            span.set_attribute("tether.limit.hit", stop)
        if result.reason and (stop != "error" or self.capture):
            # an error's text may quote a tool or model: content, so opt-in
            span.set_attribute("tether.stop.detail", run.masker.text(result.reason))
        if stop == "error":
            span.set_attribute(A.ERROR_TYPE, "tether.RunError")
            span.set_status(Status(StatusCode.ERROR, "the run failed"))

    # -- governance -------------------------------------------------------------------

    def _policy_verdict(self, verdict: PolicyVerdict) -> None:
        """An intervention handler returned Deny, Guide, Confirm or Transform."""
        point, policy, action = verdict.point, verdict.policy, verdict.action
        event: Any = verdict.subject
        run = self._runs.get(id(verdict.agent))
        if run is None:
            return
        call = getattr(event, "tool_call", None)
        if action == "Confirm" and point == "before_tool_call" and call is not None:
            entry = run.tools.get(call.id)
            if entry is not None:
                entry.confirming.append(policy)
        attrs = {"tether.policy": policy, "tether.action": action, "tether.point": point}
        if verdict.error is not None:  # failed open: the exception type, never its text
            attrs["error.type"] = verdict.error
        G.verdict_span(run, point, event).add_event("tether.policy.verdict", attrs)
        self.instruments.verdicts.add(
            1, {"tether.policy": policy, "tether.action": action, "tether.point": point}
        )

    def _agent_hooks_record(
        self, agent: AgentRef, forward: Callable[[Any], None] | None, record: Any
    ) -> None:
        run = self._runs.get(id(agent))
        if run is not None:
            point = G.agent_hooks_event(run, record, run.masker)
            if not record.proceeds:
                self._decided("deny", f"agent_hooks.{point}")
        if forward is not None:
            forward(record)


def is_traced(agent: AgentRef) -> bool:
    """Whether a :class:`Tracing` already watches ``agent``."""
    return agent in _TRACED


def instrument(
    agent: AgentRef,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool | None = None,
    resume: ResumeMode = "continue",
    agent_name: str = "tether",
) -> Tracing:
    """Trace ``agent`` (built already) with a new :class:`Tracing`; returns it."""
    if agent in _TRACED:
        raise ConfigurationError(
            f"agent (session {agent.session_id}) is already traced: by a Tracing in "
            "hooks=[...], an earlier instrument(), or automatically because a run of it "
            "started while a global tracer provider was set (TETHER_TRACING=off turns that off)"
        )
    tracing = Tracing(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        resume=resume,
        agent_name=agent_name,
    )
    agent.runtime.hooks.add_provider(tracing)
    tracing.observe(agent)
    return tracing


def release() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tether")
    except PackageNotFoundError:  # running from a source tree
        return None


def _calling_span(agent: AgentRef) -> trace.Span | None:
    """The open span of the parent's tool call that runs ``agent`` (a traced sub-agent)."""
    spawn = agent.runtime.spawned_by
    return None if spawn is None else spans.open_tool(*spawn)


def _masker(agent: AgentRef) -> Masker:
    """The run's redaction: the agent's redactor, the tree's hidden strings."""
    from tether.governance.masks import Masker, model_keys
    from tether.governance.redaction import redactor_of

    hidden = agent.runtime.hidden
    hidden |= model_keys(agent.runtime.model)  # a provider's error text may echo its key
    return Masker(redactor_of(agent), {}, hidden)


def _system(prompt: str) -> str:
    import json

    return json.dumps([{"type": "text", "content": prompt}], ensure_ascii=False)
