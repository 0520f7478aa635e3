"""tether's own log records carry the session id and the trace and span ids of the traced
invocation they were written in (``tether_session_id``, ``otelTraceID``, ``otelSpanID``,
the names OpenTelemetry's logging instrumentation uses)."""

from __future__ import annotations

import logging
from contextvars import ContextVar

from opentelemetry.trace import Span

LOGGERS = ("tether", "tether.audit", "tether.mcp")
"""The loggers tether writes to (a filter on a logger applies to its own records only)."""

current: ContextVar[tuple[str, Span] | None] = ContextVar("tether_observe_run", default=None)
"""The session id and invocation span of the traced run in this task (None outside one)."""


class TraceContextFilter(logging.Filter):
    """Adds the current traced run's session id, trace id and span id to each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = current.get()
        if found is not None:
            session_id, span = found
            context = span.get_span_context()
            record.tether_session_id = session_id
            record.otelTraceID = format(context.trace_id, "032x")
            record.otelSpanID = format(context.span_id, "016x")
        return True


_FILTER = TraceContextFilter()


def install() -> None:
    """Put the filter on tether's loggers (once)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
