"""The per-call record of provider retries and fallbacks, journaled with the answer.

A model call whose provider retried (``ModelRetry``) or whose ``FallbackChain`` moved on
(``ModelFallback``) leaves ``{"retries": [...], "fallbacks": [...]}`` on the run; the
assistant message that answers the call is journaled with it (``"failover"`` in the
``message`` entry), so a timeline can say per call how many attempts it took, why, and
which model answered. Calls without a failed attempt write nothing extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tether.events import ModelFallback, ModelRetry

if TYPE_CHECKING:
    from tether.run_state import RunState

ERROR_CHARS: Final = 300
"""Characters of a provider's error message kept per attempt."""
MAX_ATTEMPTS: Final = 50
"""Attempts recorded per call (a runaway retry loop does not grow the journal entry)."""


def note(run: RunState, event: object) -> None:
    """Add ``event`` (a ModelRetry or ModelFallback) to the current call's record."""
    record = run.failover
    if record is None:
        record = run.failover = {"retries": [], "fallbacks": []}
    if len(record["retries"]) + len(record["fallbacks"]) >= MAX_ATTEMPTS:
        return
    from tether.governance.masks import provider_text

    # redacted before it is clipped and journaled: a provider's text may echo the API key
    error = provider_text(getattr(event, "error", ""), run.runtime.model)[:ERROR_CHARS]
    if isinstance(event, ModelRetry):
        record["retries"].append(
            {
                "attempt": event.attempt,
                "reason": event.reason,
                "provider": event.provider,
                "delay": event.delay,
                "error": error,
            }
        )
    elif isinstance(event, ModelFallback):
        record["fallbacks"].append(
            {
                "from": event.from_model,
                "to": event.to_model,
                "reason": event.reason,
                "error": error,
            }
        )
