"""The span of an approval decided from the CLI or the HTTP API (see tether.observe.decision).

Written only when the operator configured OpenTelemetry in the deciding process (a global
tracer provider, e.g. through ``opentelemetry-instrument`` and the ``OTEL_*`` variables);
otherwise nothing is imported or done. The decision is already recorded when its span is
written, so a failure here is a warning, never a failed decision.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tether._otel import global_tracer_provider

if TYPE_CHECKING:
    from tether.durable import Approval, Store

StoreCall = Callable[..., Awaitable[Any]]
"""``await run(fn, *args)``: how the caller calls its store (the server's StoreRunner)."""

log = logging.getLogger("tether")


def tracing_on() -> bool:
    """Whether a decision made now would be traced."""
    return global_tracer_provider() is not None


async def trace_decided(
    store: Store,
    approval: Approval,
    *,
    via: str,
    started_ns: int,
    run: StoreCall | None = None,
) -> None:
    """The decision's span in the session's trace, when tracing is on (see module doc).
    ``run`` calls the store (the server's StoreRunner); the span is made in this task, so
    a span current here (an HTTP request's) is linked."""
    if not tracing_on():
        return
    from tether.observe.continuity import load_current
    from tether.observe.decision import decision_span

    try:
        if run is None:
            saved = await load_current(store, approval.session_id)
        else:
            saved = await run(load_current, store, approval.session_id)
        decision_span(approval, saved, via=via, started_ns=started_ns)
    except Exception as exc:  # the decision stands; only its span is missing
        log.warning(
            "approval %s was %s; its trace span was not written: %s",
            approval.id,
            approval.status,
            exc,
        )
