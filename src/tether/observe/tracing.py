"""Tracing: the HookProvider (plus stream observer) that turns a run into spans and metrics."""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from opentelemetry import metrics, trace
from opentelemetry.trace import Link, NonRecordingSpan, Span, SpanKind, Status, StatusCode

from tether.control.events import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
)
from tether.errors import ConfigurationError
from tether.events import ModelFallback, ModelRetry, StreamEvent
from tether.messages import ToolCall
from tether.observe import attributes as A
from tether.observe import continuity, logs
from tether.observe.metrics import Instruments

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.control.registry import HookRegistry
    from tether.durable.approval_types import Approval, Redactor
    from tether.result import Result
    from tether.session import SessionJournal
    from tether.tools import Tool

ResumeMode: TypeAlias = Literal["continue", "link"]
FIRST = -1_000_000
"""Spans open before every other hook (HookOrder.SDK_FIRST is 0) ..."""
LAST = 1_000_000
"""... and close, or record a decision, after every other hook has had its say."""
_SCOPE = "tether"
_MAX_SAVED = 1024


@dataclass(slots=True)
class _Tool:
    span: Span
    call: ToolCall
    tool: Tool | None
    started: float


@dataclass(slots=True)
class _Run:
    """The open spans of one invocation."""

    span: Span
    context: Context
    journal: SessionJournal | None
    model: str
    provider: str
    redactor: Redactor | None
    resumed: bool
    chat: Span | None = None
    chat_started: float = 0.0
    chat_model: str = ""
    attempt: int = 0
    tools: dict[str, _Tool] = field(default_factory=dict)
    last_seen: int = 0
    """time_ns() of the last stream event (the end of a run its caller abandoned)."""


class Tracing:
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
        release = _release()
        self.tracer = trace.get_tracer(_SCOPE, release, tracer_provider)
        self.instruments = Instruments(metrics.get_meter(_SCOPE, release or "", meter_provider))
        self.capture = A.capture_from_env() if capture_content is None else capture_content
        self.resume = resume
        self.agent_name = agent_name
        self._runs: dict[int, _Run] = {}
        self._saved: dict[str, dict[str, Any]] = {}
        self._observed: weakref.WeakSet[Agent] = weakref.WeakSet()
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

    def observe(self, agent: Agent) -> None:
        """Watch ``agent``'s stream events (provider retries and fallbacks)."""
        if agent not in self._observed:
            self._observed.add(agent)
            agent.observers.append(partial(self._stream_event, agent))
            weakref.finalize(agent, self._runs.pop, id(agent), None)
            host = agent.agent_hooks
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
            _end_abandoned(stale)
        state = agent.conversation.run
        journal = state.journal if state is not None else None
        resumed = not event.messages  # a resume starts its invocation with no new input
        saved = None
        if resumed:
            saved = self._saved.pop(agent.session_id, None)
            if saved is None and journal is not None:
                saved = await continuity.load(journal.store, agent.session_id, journal.version)
        parent: Context | None = None
        links: list[Link] = []
        remote = continuity.span_context(saved) if saved is not None else None
        if remote is not None:
            if self.resume == "continue":
                parent = trace.set_span_in_context(NonRecordingSpan(remote))
            else:
                links.append(Link(remote, {"tether.link": "resumed_from"}))
        model = A.first_model(agent.model).name
        provider = A.provider_of(agent.model)
        attributes: dict[str, Any] = {
            A.OPERATION: "invoke_agent",
            A.AGENT_NAME: self.agent_name,
            A.CONVERSATION: agent.session_id,
            A.PROVIDER: provider,
            A.REQUEST_MODEL: model,
            "tether.resumed": resumed and saved is not None,
            **A.limit_attributes(agent.limits),
        }
        if agent.budget is not None:
            attributes["tether.budget.total"] = agent.budget.total
        if self.capture and agent.system_prompt:
            attributes[A.SYSTEM_INSTRUCTIONS] = _system(agent.system_prompt)
        span = self.tracer.start_span(
            f"invoke_agent {self.agent_name}",
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
            _answered(span, saved, agent.answers, rows)
            if remote is not None:
                self._decision_spans(remote, saved, agent, rows)
        redactor = None
        if self.capture:
            from tether.durable.redaction import redactor_of

            redactor = redactor_of(agent)
        logs.current.set((agent.session_id, span))  # this task's records carry the ids
        self._runs[id(agent)] = _Run(
            span,
            trace.set_span_in_context(span),
            journal,
            model,
            provider,
            redactor,
            resumed,
        )

    def _decision_spans(
        self,
        remote: trace.SpanContext,
        saved: dict[str, Any],
        agent: Agent,
        rows: dict[str, Approval],
    ) -> None:
        """One span per approval decided for the suspended run, in its trace, at the time
        of the decision (built from the approval row when the session resumes)."""
        parent = trace.set_span_in_context(NonRecordingSpan(remote))
        for item in saved.get("interrupts") or ():
            row = rows.get(str(item.get("id"))) if isinstance(item, dict) else None
            if row is None or row.decided_at is None:
                continue
            at = int(row.decided_at * 1e9)
            attributes = {
                A.CONVERSATION: agent.session_id,
                **_approval_attrs(row),
                "tether.interrupt.id": row.interrupt_id,
            }
            if row.tool is not None:
                attributes[A.TOOL_NAME] = row.tool
            span = self.tracer.start_span(
                f"approval {row.name}",
                context=parent,
                kind=SpanKind.INTERNAL,
                attributes=attributes,
                start_time=at,
            )
            span.end(end_time=at)

    def _invocation_checked(self, event: BeforeInvocation) -> None:
        run = self._runs.get(id(event.agent))
        if run is not None and event.block:
            run.span.add_event("tether.invocation.blocked", {"tether.reason": event.block})
            self._decided("block", "before_invocation")

    def _output_checked(self, event: BeforeOutput) -> None:
        run = self._runs.get(id(event.agent))
        if run is not None and event.block:
            run.span.add_event("tether.output.blocked", {"tether.reason": event.block})
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
                open_tool.span.add_event("tether.interrupt.raised", _interrupt_attrs(interrupt))
            open_tool.span.set_attribute("tether.tool.status", status)
            open_tool.span.end()
        run.tools.clear()
        for interrupt in result.interrupts:
            run.span.add_event("tether.interrupt.raised", _interrupt_attrs(interrupt))
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
        run.span.end()

    def _finish_attributes(self, run: _Run, agent: Agent, result: Result) -> None:
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
        if agent.budget is not None:
            span.set_attribute("tether.budget.remaining", agent.budget.remaining)
        if stop.startswith("limit_") or stop == "budget_exhausted":
            span.set_attribute("tether.limit.hit", stop)
        if result.reason and (stop != "error" or self.capture):
            # an error's text may quote a tool or model: content, so opt-in
            span.set_attribute("tether.stop.detail", result.reason)
        if stop == "error":
            span.set_attribute(A.ERROR_TYPE, "tether.RunError")
            span.set_status(Status(StatusCode.ERROR, "the run failed"))

    # -- model calls ------------------------------------------------------------------

    def _model_start(self, event: BeforeModelCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        if event.block:
            run.span.add_event(
                "tether.model_call.blocked",
                {"tether.reason": event.block, "tether.attempt": event.attempt},
            )
            self._decided("block", "before_model_call")
            return
        run.attempt = 1
        self._start_chat(run, run.model, {"tether.attempt": event.attempt})
        if self.capture and run.chat is not None:
            run.chat.set_attribute(A.INPUT_MESSAGES, A.messages_json(event.messages, run.redactor))

    def _start_chat(self, run: _Run, model: str, extra: dict[str, Any]) -> None:
        run.chat_model = model
        run.chat_started = time.perf_counter()
        run.chat = self.tracer.start_span(
            f"chat {model}",
            context=run.context,
            kind=SpanKind.CLIENT,
            attributes={
                A.OPERATION: "chat",
                A.PROVIDER: run.provider,
                A.REQUEST_MODEL: model,
                "tether.provider_attempt": run.attempt,
                **extra,
            },
        )

    def _model_end(self, event: AfterModelCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None or run.chat is None:
            return
        chat = run.chat
        response, exc = event.response, event.exception
        if response is not None and exc is None:
            usage = response.usage
            chat.set_attributes(
                {
                    A.RESPONSE_MODEL: run.chat_model,
                    A.INPUT_TOKENS: usage.input_tokens,
                    A.OUTPUT_TOKENS: usage.output_tokens,
                    A.FINISH_REASONS: [response.stop_reason],
                }
            )
            if self.capture:
                chat.set_attribute(
                    A.OUTPUT_MESSAGES, A.messages_json([response.message], run.redactor)
                )
            self.instruments.tokens(
                self._metric_attrs(run), usage.input_tokens, usage.output_tokens
            )
        if event.block:
            chat.add_event("tether.model_call.blocked", {"tether.reason": event.block})
            self._decided("block", "after_model_call")
        elif event.retry:
            chat.add_event(
                "tether.model_call.retry_requested", {"tether.guidance": bool(event.guidance)}
            )
            self._decided("guide" if event.guidance else "retry", "after_model_call")
        error = None if exc is None else _error_type(exc)
        if exc is not None:
            chat.set_attribute("tether.failover.reason", str(getattr(exc, "reason", "unknown")))
        self._end_chat(run, exc, error=error)

    def _end_chat(self, run: _Run, exc: BaseException | None, *, error: str | None) -> None:
        chat = run.chat
        if chat is None:
            return
        attrs = self._metric_attrs(run)
        if error is not None:
            chat.set_attribute(A.ERROR_TYPE, error)
            detail = f"{type(exc).__name__}: {exc}" if exc is not None and self.capture else None
            chat.set_status(Status(StatusCode.ERROR, detail or error))
            attrs[A.ERROR_TYPE] = error
        self.instruments.duration.record(time.perf_counter() - run.chat_started, attrs)
        chat.end()
        run.chat = None

    def _metric_attrs(self, run: _Run) -> dict[str, Any]:
        return {
            A.OPERATION: "chat",
            A.PROVIDER: run.provider,
            A.REQUEST_MODEL: run.chat_model,
        }

    def _stream_event(self, agent: Agent, event: StreamEvent) -> None:
        run = self._runs.get(id(agent))
        if run is None:
            return
        run.last_seen = time.time_ns()
        kind = type(event)
        if (kind is not ModelRetry and kind is not ModelFallback) or run.chat is None:
            return
        chat = run.chat
        if isinstance(event, ModelRetry):
            chat.add_event(
                "tether.model.retry",
                {"tether.reason": event.reason, "tether.delay_s": event.delay},
            )
            self.instruments.retries.add(1, {"tether.reason": event.reason})
            self._end_chat(run, None, error=event.reason)
            run.attempt += 1
            self._start_chat(run, run.model, {"tether.retry_of": event.attempt})
        elif isinstance(event, ModelFallback):
            chat.add_event(
                "tether.model.fallback",
                {
                    "tether.reason": event.reason,
                    "tether.fallback.from": event.from_model,
                    "tether.fallback.to": event.to_model,
                },
            )
            self.instruments.fallbacks.add(1, {"tether.reason": event.reason})
            self._end_chat(run, None, error=event.reason)
            run.model = event.to_model  # a FallbackChain keeps it for the invocation
            run.attempt = 1
            self._start_chat(run, event.to_model, {"tether.fallback_from": event.from_model})

    # -- tool calls -------------------------------------------------------------------

    def _tool_start(self, event: BeforeToolCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        call = event.tool_call
        span = self.tracer.start_span(
            f"execute_tool {call.name}",
            context=run.context,
            kind=SpanKind.INTERNAL,
            attributes={
                A.OPERATION: "execute_tool",
                A.TOOL_NAME: call.name,
                A.TOOL_CALL_ID: call.id,
                A.TOOL_TYPE: "function",
            },
        )
        run.tools[call.id] = _Tool(span, call, event.selected_tool, time.perf_counter())

    def _tool_checked(self, event: BeforeToolCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        entry = run.tools.get(event.tool_call.id)
        if entry is None:
            return
        span = entry.span
        if event.tool_call is not entry.call:
            span.add_event("tether.tool.rewritten")
        if event.selected_tool is not entry.tool:
            chosen = getattr(event.selected_tool, "name", None)
            span.add_event("tether.tool.redirected", {"tether.tool.selected": str(chosen)})
        if event.cancel_tool:
            reason = event.cancel_tool
            text = reason if isinstance(reason, str) else "cancelled by a hook"
            decision = "guide" if text.startswith("not run. Guidance") else "deny"
            span.add_event(f"tether.tool.{decision}", {"tether.reason": text})
            self._decided(decision, "before_tool_call")

    def _tool_end(self, event: AfterToolCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        call, result = event.tool_call, event.result
        if event.retry:
            entry = run.tools.get(call.id)
            if entry is not None:
                entry.span.add_event("tether.tool.retry_requested")
            return
        entry = run.tools.pop(call.id, None)
        if entry is None:
            return
        span = entry.span
        span.set_attribute("tether.tool.status", result.status)
        if result.status == "denied":
            span.set_attribute(A.ERROR_TYPE, "denied")
            span.set_status(Status(StatusCode.ERROR, result.content))  # the policy's reason
        elif result.is_error:
            error = _error_type(event.exception) if event.exception else result.status
            span.set_attribute(A.ERROR_TYPE, error)
            span.set_status(Status(StatusCode.ERROR, result.content if self.capture else error))
        if self.capture:
            span.set_attributes(A.tool_content(call, result, run.redactor))
        self.instruments.tool_calls.add(
            1, {A.TOOL_NAME: call.name, "tether.tool.status": result.status}
        )
        span.end()

    def _agent_hooks_record(
        self, agent: Agent, forward: Callable[[Any], None] | None, record: Any
    ) -> None:
        """One AGENT-HOOKS InterceptionRecord (payload-free) as an event on the span it judged."""
        run = self._runs.get(id(agent))
        if run is not None:
            point = record.interception_point.value
            span = run.span
            if point.endswith("model_call") and run.chat is not None:
                span = run.chat
            elif point.endswith("tool_call") and len(run.tools) == 1:
                span = next(iter(run.tools.values())).span
            verdict = record.verdict
            attrs: dict[str, Any] = {
                "tether.agent_hooks.point": point,
                "tether.agent_hooks.decision": verdict.decision.value,
                "tether.agent_hooks.session_id": record.session_id,
                "tether.agent_hooks.sequence": record.sequence,
                "tether.agent_hooks.proceeds": record.proceeds,
            }
            optional = {
                "tether.agent_hooks.reason": verdict.reason,
                "tether.agent_hooks.decided_by": record.decided_by,
                "tether.agent_hooks.input_identity": record.input_identity,
                "tether.agent_hooks.enforced_identity": record.enforced_identity,
            }
            attrs.update({k: v for k, v in optional.items() if v is not None})
            span.add_event("tether.agent_hooks.verdict", attrs)
            if not record.proceeds:
                self._decided("deny", f"agent_hooks.{point}")
        if forward is not None:
            forward(record)

    def _decided(self, decision: str, point: str) -> None:
        self.instruments.decisions.add(1, {"tether.decision": decision, "tether.point": point})


def instrument(
    agent: Agent,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
    capture_content: bool | None = None,
    resume: ResumeMode = "continue",
    agent_name: str = "tether",
) -> Tracing:
    """Trace ``agent`` (built already) with a new :class:`Tracing`; returns it."""
    tracing = Tracing(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        resume=resume,
        agent_name=agent_name,
    )
    agent.hooks.add_provider(tracing)
    tracing.observe(agent)
    return tracing


def _release() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tether")
    except PackageNotFoundError:  # running from a source tree
        return None


def _system(prompt: str) -> str:
    import json

    return json.dumps([{"type": "text", "content": prompt}], ensure_ascii=False)


def _error_type(exc: BaseException) -> str:
    kind = type(exc)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def _interrupt_attrs(interrupt: Interrupt) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "tether.interrupt.id": interrupt.id,
        "tether.interrupt.name": interrupt.name,
        "tether.interrupt.source": interrupt.source,
        "tether.interrupt.point": interrupt.point,
    }
    if interrupt.tool_call is not None:
        attrs[A.TOOL_NAME] = interrupt.tool_call.name
        attrs[A.TOOL_CALL_ID] = interrupt.tool_call.id
    return attrs


def _end_abandoned(run: _Run) -> None:
    """End the spans of a run whose caller stopped reading its stream (no AfterInvocation
    fires then), at the time of its last event."""
    end = run.last_seen or None
    for span in [run.chat, *(t.span for t in run.tools.values())]:
        if span is not None:
            span.set_attribute("tether.abandoned", True)
            span.end(end_time=end)
    run.span.set_attributes({"tether.stop_reason": "cancelled", "tether.abandoned": True})
    run.span.end(end_time=end)


def _approval_attrs(row: Approval) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "tether.approval.id": row.id,
        "tether.approval.status": row.status,
        "tether.approval.decision": str(row.decision),
        "tether.approval.edited": row.edited_args is not None,
    }
    if row.decided_by is not None:
        attrs["tether.approval.decided_by"] = row.decided_by
    if row.decided_at is not None:
        attrs["tether.approval.decided_at"] = row.decided_at
    return attrs


def _answered(
    span: Span, saved: dict[str, Any], answers: dict[str, Any], rows: dict[str, Approval]
) -> None:
    """Events for the answers that let this resume go on (the approvals decided)."""
    from tether.control.audit import answer_kind

    for item in saved.get("interrupts") or ():
        if not isinstance(item, dict) or item.get("id") not in answers:
            continue
        source = item.get("source")
        name = "tether.in_doubt.settled" if source == "in_doubt" else "tether.interrupt.answered"
        attrs = {
            "tether.interrupt.id": str(item["id"]),
            "tether.interrupt.source": str(source),
            "tether.answer": answer_kind(answers[item["id"]]),
        }
        row = rows.get(item["id"])
        if row is not None:
            attrs.update(_approval_attrs(row))
        span.add_event(name, attrs)
