"""One trace across suspend and resume: the suspended invocation's W3C trace context is
journaled (an ``audit`` entry ``{"otel": {...}}``) and read back by the resume."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.durable import Store
    from tether.durable.approval_types import Approval
    from tether.session import SessionJournal

KEY = "otel"
_PENDING_LIMIT = 100_000
_log = logging.getLogger("tether")
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
    """Journal the context of a suspended invocation (the journal is still leased).

    Best effort: the suspension itself is already durable, so a failed write only means
    the resume starts a new trace; it never fails the run."""
    if journal.failed:
        return
    try:
        await journal.append("audit", {KEY: saved})
    except TetherError as exc:
        _log.warning("session %s: trace context not saved: %s", journal.session_id, exc)


async def decided_approvals(store: Store, session_id: str) -> dict[str, Approval]:
    """The session's decided approval rows by interrupt id (empty when unavailable)."""
    approvals = getattr(store, "approvals", None)
    if approvals is None:
        return {}
    try:
        rows: list[Approval] = await approvals.find(session_id=session_id, limit=1000)
    except TetherError as exc:
        _log.warning("session %s: approvals not read for tracing: %s", session_id, exc)
        return {}
    return {r.interrupt_id: r for r in rows if r.decided_at is not None}


async def pending_approvals(store: Store) -> int | None:
    """How many approvals wait for a decision in ``store`` (None when unavailable)."""
    approvals = getattr(store, "approvals", None)
    if approvals is None:
        return None
    try:
        return len(await approvals.pending(limit=_PENDING_LIMIT))
    except TetherError as exc:
        _log.warning("approvals not counted for tracing: %s", exc)
        return None


async def load(store: Store, session_id: str, version: int) -> dict[str, Any] | None:
    """The context saved by the run this resume continues (None: it was not traced, or
    the journal could not be read: the resume then starts a new trace)."""
    try:
        entries = await store.read_entries(session_id, max(0, version - _LOOKBACK))
    except TetherError as exc:
        _log.warning("session %s: trace context not read: %s", session_id, exc)
        return None
    for entry in reversed(entries):
        if entry.kind == "audit" and isinstance(entry.data.get(KEY), dict):
            found: dict[str, Any] = entry.data[KEY]
            return found
        if entry.kind == "status" and entry.data.get("status") == "running":
            return None  # the suspended run started after the last saved context
    return None


async def load_current(store: Store, session_id: str) -> dict[str, Any] | None:
    """The context of the session's newest run when that run is suspended and was traced
    (for a process deciding one of its approvals, which does not know the journal's end).
    Store errors propagate: the caller decides what a missing context means."""
    record = await store.load(session_id)
    if record is None:
        return None
    return await load(store, session_id, record.version)
