"""The approval decision as a span in the suspended session's trace, written by the
process that decides (``tether approvals approve|deny|respond``, the HTTP API, or an
application calling :func:`trace_decision` after ``store.approvals.decide``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, NonRecordingSpan, SpanKind

from tether.errors import ConfigurationError
from tether.observe import attributes as A
from tether.observe import continuity
from tether.observe.governance import approval_attrs

if TYPE_CHECKING:
    from opentelemetry.trace import Span, TracerProvider

    from tether.durable import Store
    from tether.durable.approval_types import Approval


async def trace_decision(
    store: Store,
    approval: Approval,
    *,
    via: str = "api",
    started_ns: int | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Span:
    """Record the decision of ``approval`` (as returned by ``store.approvals.decide``) as
    the span ``approval {name}``, a child of the invocation span of the run it suspended
    (whose context that run journaled), so the decision sits in the session's one trace.

    ``via`` names the deciding channel (``cli``, ``http``, ``api``); ``started_ns`` is
    when the decider started (``time.time_ns()``; default: the decision time). The span
    uses the global tracer provider unless ``tracer_provider`` is given. A span current
    in the caller (an HTTP request's, say) is linked. When the run left no trace context
    (it was not traced, or its context could not be saved) the span starts its own trace.
    Reading the journal may raise the store's errors; the decision itself is not touched.
    """
    _check_decided(approval)
    saved = await continuity.load_current(store, approval.session_id)
    return decision_span(
        approval, saved, via=via, started_ns=started_ns, tracer_provider=tracer_provider
    )


def decision_span(
    approval: Approval,
    saved: dict[str, Any] | None,
    *,
    via: str = "api",
    started_ns: int | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Span:
    """The span of :func:`trace_decision`, given the context the suspended run journaled
    (``continuity.load_current``; None: start a new trace)."""
    decided_at = _check_decided(approval)
    remote = continuity.span_context(saved) if saved is not None else None
    current = trace.get_current_span().get_span_context()
    links: list[Link] = []
    parent = None
    if remote is not None:
        parent = trace.set_span_in_context(NonRecordingSpan(remote), otel_context.Context())
        if current.is_valid:
            links.append(Link(current, {"tether.link": "decided_in"}))
    attributes: dict[str, Any] = {
        A.CONVERSATION: approval.session_id,
        "tether.interrupt.id": approval.interrupt_id,
        "tether.interrupt.source": approval.source,
        "tether.approval.via": via,
        "tether.trace.continued": remote is not None,
        **approval_attrs(approval),
    }
    if approval.tool is not None:
        attributes[A.TOOL_NAME] = approval.tool
    decided_ns = int(decided_at * 1e9)
    span = _tracer(tracer_provider).start_span(
        f"approval {approval.name}",
        context=parent,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        links=links,
        start_time=min(started_ns or decided_ns, decided_ns),
    )
    span.end(end_time=max(time.time_ns(), decided_ns))
    return span


def _check_decided(approval: Approval) -> float:
    if approval.decided_at is None:
        raise ConfigurationError(
            f"approval {approval.id} is {approval.status}, not decided: trace the Approval "
            "that store.approvals.decide(...) returned"
        )
    return approval.decided_at


def _tracer(provider: TracerProvider | None) -> trace.Tracer:
    from tether.observe.tracing import SCOPE, release

    return trace.get_tracer(SCOPE, release(), provider)
