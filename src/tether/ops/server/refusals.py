"""Refusals: audit records of refused decisions (at most one per approver per window),
and the HTTP answer when the store refuses a call (:func:`store_refusal`).

A refused decision is worth an audit record, but an approver who may not decide
(a viewer, say) could otherwise grow the audit log by one row per request. So the
first refusal of an approver in a window is recorded, the others of that window are
counted, and the count goes into that approver's next record (``"repeated"``: refusals
since the previous record that have no record of their own), or into a last record
when the server stops. So the refusals are the records plus the sum of ``repeated``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from tether.durable.errors import StoreBusy, StoreError, StoreFull, StoreUnavailable

REFUSAL_WINDOW: Final = 60.0
"""Seconds: at most one ``approval.refused`` record per approver in this time."""


def store_refusal(exc: StoreError) -> tuple[int, dict[str, str]]:
    """The status and headers answering ``exc``: 503 with ``Retry-After`` when nothing
    was lost and a retry may succeed (a busy store, a full disk, a store out of reach),
    else 500."""
    if isinstance(exc, StoreBusy):
        return 503, {"Retry-After": "1"}
    if isinstance(exc, StoreFull):
        return 503, {"Retry-After": str(round(exc.retry_after))}
    if isinstance(exc, StoreUnavailable):
        return 503, {"Retry-After": "5"}
    return 500, {}


Append = Callable[[str, dict[str, Any], str | None], Awaitable[object]]
"""``append(event, data, session_id)``: writes one audit record."""


@dataclass(slots=True)
class _Seen:
    recorded_at: float
    repeated: int  # refusals since ``recorded_at`` not recorded
    last: dict[str, Any]
    session_id: str | None


class RefusalLog:
    """Coalesces ``approval.refused`` records per approver (the approver set is bounded:
    only authenticated approvers get this far)."""

    def __init__(self, append: Append, *, window: float = REFUSAL_WINDOW) -> None:
        self._append = append
        self._window = window
        self._seen: dict[str, _Seen] = {}

    async def refused(self, approver: str, data: dict[str, Any], session_id: str | None) -> None:
        """Record (or count) one refusal of ``approver``."""
        now = time.monotonic()
        seen = self._seen.get(approver)
        if seen is not None and now - seen.recorded_at < self._window:
            seen.repeated += 1
            seen.last, seen.session_id = data, session_id
            return
        repeated = 0 if seen is None else seen.repeated
        self._seen[approver] = _Seen(now, 0, data, session_id)
        await self._append("approval.refused", {**data, "repeated": repeated}, session_id)

    async def flush(self) -> None:
        """Write the counts not yet recorded (on shutdown), describing the last refusal."""
        pending = [(name, s) for name, s in self._seen.items() if s.repeated]
        self._seen.clear()
        for _, seen in pending:  # the record is the last refusal; the others are counted
            await self._append(
                "approval.refused", {**seen.last, "repeated": seen.repeated - 1}, seen.session_id
            )
