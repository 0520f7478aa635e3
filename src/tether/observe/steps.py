"""The spans of a run's steps: a ``chat`` span per model call attempt, an ``execute_tool``
span per tool call (the model and tool half of :class:`tether.observe.Tracing`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tether.events import ModelFallback, ModelRetry, StreamEvent
from tether.observe import attributes as A
from tether.observe.metrics import Instruments
from tether.observe.runs import RunSpans, ToolSpan, tool_closed, tool_opened

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.events import AfterModelCall, AfterToolCall, BeforeModelCall, BeforeToolCall


class StepSpans:
    """Model call and tool call spans; :class:`Tracing` sets the attributes declared here."""

    tracer: trace.Tracer
    instruments: Instruments
    capture: bool
    _runs: dict[int, RunSpans]

    def _model_start(self, event: BeforeModelCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        if event.block:
            run.span.add_event(
                "tether.model_call.blocked",
                {"tether.reason": run.masker.text(event.block), "tether.attempt": event.attempt},
            )
            self._decided("block", "before_model_call")
            return
        if run.conducting is not None:
            return  # a workflow's decision is no LLM call: an event at its end, no span
        run.attempt = 1
        self._start_chat(run, run.model, {"tether.attempt": event.attempt})
        if self.capture and run.chat is not None:
            run.chat.set_attribute(A.INPUT_MESSAGES, A.messages_json(event.messages, run.masker))

    def _start_chat(self, run: RunSpans, model: str, extra: dict[str, Any]) -> None:
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
        if run is not None and run.conducting is not None:
            decided(run, event)
            return
        if run is None or run.chat is None:
            return
        chat = run.chat
        response, exc = event.response, event.exception
        if response is not None and exc is None:
            for call in response.message.tool_calls:
                run.masker.learn(call.name, dict(call.arguments))  # before any text quotes them
            usage = response.usage
            chat.set_attributes(
                {
                    A.RESPONSE_MODEL: run.chat_model,
                    A.INPUT_TOKENS: usage.input_tokens,
                    A.OUTPUT_TOKENS: usage.output_tokens,
                    A.FINISH_REASONS: [response.stop_reason],
                }
            )
            if usage.cost is not None:
                chat.set_attribute(A.COST, float(usage.cost))
            if self.capture:
                chat.set_attribute(
                    A.OUTPUT_MESSAGES, A.messages_json([response.message], run.masker)
                )
            self.instruments.tokens(
                self._metric_attrs(run), usage.input_tokens, usage.output_tokens
            )
        if event.block:
            reason = run.masker.text(event.block)
            chat.add_event("tether.model_call.blocked", {"tether.reason": reason})
            self._decided("block", "after_model_call")
        elif event.retry:
            chat.add_event(
                "tether.model_call.retry_requested", {"tether.guidance": bool(event.guidance)}
            )
            self._decided("guide" if event.guidance else "retry", "after_model_call")
        error = None if exc is None else error_type(exc)
        if exc is not None:
            chat.set_attribute("tether.failover.reason", str(getattr(exc, "reason", "unknown")))
        self._end_chat(run, exc, error=error)

    def _end_chat(self, run: RunSpans, exc: BaseException | None, *, error: str | None) -> None:
        chat = run.chat
        if chat is None:
            return
        attrs = self._metric_attrs(run)
        if error is not None:
            chat.set_attribute(A.ERROR_TYPE, error)
            detail = f"{type(exc).__name__}: {exc}" if exc is not None and self.capture else None
            chat.set_status(Status(StatusCode.ERROR, run.masker.text(detail or error)))
            attrs[A.ERROR_TYPE] = error
        self.instruments.duration.record(time.perf_counter() - run.chat_started, attrs)
        chat.end()
        run.chat = None

    def _metric_attrs(self, run: RunSpans) -> dict[str, Any]:
        return {
            A.OPERATION: "chat",
            A.PROVIDER: run.provider,
            A.REQUEST_MODEL: run.chat_model,
        }

    def _stream_event(self, agent: AgentRef, event: StreamEvent) -> None:
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
            run.provider = A.provider_named(agent.runtime.model, event.to_model) or run.provider
            run.attempt = 1
            self._start_chat(run, event.to_model, {"tether.fallback_from": event.from_model})

    # -- tool calls -------------------------------------------------------------------

    def _tool_start(self, event: BeforeToolCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        call = event.tool_call
        run.masker.learn(call.name, dict(call.arguments))  # an error or reason may quote them
        span = self.tracer.start_span(
            f"execute_tool {call.name}",
            context=run.context,
            kind=SpanKind.INTERNAL,
            attributes={
                A.OPERATION: "execute_tool",
                A.TOOL_NAME: call.name,
                A.TOOL_CALL_ID: call.id,
                A.TOOL_TYPE: "function",
                **(
                    {}
                    if run.conducting is None
                    else run.conducting.span_attributes(event.agent, call)
                ),
            },
        )
        run.tools[call.id] = ToolSpan(span, call, event.selected_tool, time.perf_counter())
        tool_opened(event.agent, call.id, span)

    def _tool_checked(self, event: BeforeToolCall) -> None:
        run = self._runs.get(id(event.agent))
        if run is None:
            return
        entry = run.tools.get(event.tool_call.id)
        if entry is None:
            return
        span = entry.span
        if event.tool_call is not entry.call:
            run.masker.learn(event.tool_call.name, dict(event.tool_call.arguments))
            span.add_event("tether.tool.rewritten")
        if event.selected_tool is not entry.tool:
            chosen = getattr(event.selected_tool, "name", None)
            span.add_event("tether.tool.redirected", {"tether.tool.selected": str(chosen)})
        text = None
        if event.cancel_tool:
            reason = event.cancel_tool
            text = reason if isinstance(reason, str) else "cancelled by a hook"
        for policy in entry.confirming:  # answered in process (else the run suspended)
            refused = text is not None and f"not confirmed ({policy}:" in text
            span.add_event(
                "tether.confirm.answered", {"tether.policy": policy, "tether.approved": not refused}
            )
        if text is not None:
            decision = "guide" if text.startswith("not run. Guidance") else "deny"
            span.add_event(f"tether.tool.{decision}", {"tether.reason": run.masker.text(text)})
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
        tool_closed(event.agent, call.id)
        span = entry.span
        span.set_attribute("tether.tool.status", result.status)
        if result.status == "denied":
            span.set_attribute(A.ERROR_TYPE, "denied")
            reason = run.masker.text(str(result.content))  # the policy's reason
            span.set_status(Status(StatusCode.ERROR, reason))
        elif result.is_error:
            error = error_type(event.exception) if event.exception else result.status
            span.set_attribute(A.ERROR_TYPE, error)
            detail = str(result.content) if self.capture else error
            span.set_status(Status(StatusCode.ERROR, run.masker.text(detail)))
        if self.capture:
            span.set_attributes(A.tool_content(call, result, run.masker))
        self.instruments.tool_calls.add(
            1, {A.TOOL_NAME: call.name, "tether.tool.status": result.status}
        )
        span.end()

    def _decided(self, decision: str, point: str) -> None:
        self.instruments.decisions.add(1, {"tether.decision": decision, "tether.point": point})


def error_type(exc: BaseException) -> str:
    kind = type(exc)
    return (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )


def decided(run: RunSpans, event: AfterModelCall) -> None:
    """A workflow's decision (its conductor's turn), as an event of its run's span: the
    node runs it started (``tether.workflow.nodes``) or that it answered."""
    response = event.response
    if response is None or event.exception is not None:
        return
    calls = response.message.tool_calls
    if calls:
        run.span.add_event(
            "tether.workflow.decided", {"tether.workflow.nodes": [c.name for c in calls]}
        )
    else:
        run.span.add_event("tether.workflow.answered")
