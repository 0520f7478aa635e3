"""One trace across suspend and resume: the suspended invocation's W3C trace context is
journaled (an ``audit`` entry ``{"otel": {...}}``) and read back by the resume."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from tether.durable import Store
    from tether.session import SessionJournal

KEY = "otel"
_PROPAGATOR = TraceContextTextMapPropagator()
_LOOKBACK = 64
"""Entries read back from the journal's end: the saved context follows the suspension's
status entry, and a resume writes only its answers before its invocation starts."""


def traceparent(span: trace.Span) -> dict[str, str]:
    """The W3C ``traceparent`` (and ``tracestate``) of ``span``."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return carrier


def span_context(saved: dict[str, Any]) -> trace.SpanContext | None:
    """The remote span context a saved carrier names, or None when it is malformed."""
    carrier = {
        k: v for k, v in saved.items() if k in ("traceparent", "tracestate") and isinstance(v, str)
    }
    context = trace.get_current_span(_PROPAGATOR.extract(carrier)).get_span_context()
    return context if context.is_valid else None


async def save(journal: SessionJournal, saved: dict[str, Any]) -> None:
    """Journal the context of a suspended invocation (the journal is still leased)."""
    if not journal.failed:
        await journal.append("audit", {KEY: saved})


async def load(store: Store, session_id: str, version: int) -> dict[str, Any] | None:
    """The context saved by the run this resume continues (None: it was not traced)."""
    entries = await store.read_entries(session_id, max(0, version - _LOOKBACK))
    for entry in reversed(entries):
        if entry.kind == "audit" and isinstance(entry.data.get(KEY), dict):
            found: dict[str, Any] = entry.data[KEY]
            return found
        if entry.kind == "status" and entry.data.get("status") == "running":
            return None  # the suspended run started after the last saved context
    return None
