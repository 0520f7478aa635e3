"""What a waiting caller may see of a run in progress (the ``tether.progress`` Query).

A bounded record of the run's events as plain data. A Query is one more way out of the
run, so it carries no tool arguments or results: the model's text as it streams, which
tool started and how it ended, the interrupts raised (their questions are in the
outcome, through the redaction path) and the stop reason.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

from tether.events import FinalResult, InterruptRaised, TextDelta, ToolFinished, ToolStarted

KEPT: Final = 1_000
"""Events kept; a caller that polls less often misses the oldest (``seq`` tells it)."""


class Progress:
    """The last :data:`KEPT` events, numbered from 1."""

    def __init__(self) -> None:
        self.seq = 0
        self._events: deque[dict[str, Any]] = deque(maxlen=KEPT)

    def record(self, event: object) -> None:
        plain = _plain(event)
        if plain is not None:
            self.seq += 1
            self._events.append({"seq": self.seq, **plain})

    def since(self, seq: int) -> list[dict[str, Any]]:
        """The kept events after ``seq``."""
        return [e for e in self._events if e["seq"] > seq]


def _plain(event: object) -> dict[str, Any] | None:
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ToolStarted):
        return {"type": "tool_started", "tool": event.tool_call.name}
    if isinstance(event, ToolFinished):
        return {"type": "tool_finished", "tool": event.result.name, "status": event.result.status}
    if isinstance(event, InterruptRaised):
        return {"type": "interrupt", "id": event.interrupt.id}
    if isinstance(event, FinalResult):
        return {"type": "finished", "stop_reason": event.result.stop_reason}
    return None
