"""A compaction: which stretch of the transcript the model sees replaced, and by what."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.errors import InputError
from tether.messages import Message

SUMMARY_MARK = "[tether: summary of earlier conversation]"
"""First line of a summary message (the model and a reader see it is not verbatim)."""
OMITTED_MARK = "[tether: earlier messages omitted]"
"""First line of the marker a sliding window leaves where it dropped messages."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """The model sees ``messages[:start] + [summary] + messages[end:]``.

    The transcript itself is never shortened: the session journal keeps every
    message, and this record (journaled as a ``compaction`` entry) rebuilds the
    exact view on resume. ``summary`` is None when nothing stands in for the
    removed messages.
    """

    start: int
    end: int
    summary: Message | None = None

    def view(self, messages: list[Message]) -> list[Message]:
        """The model's view of ``messages`` (O(kept messages))."""
        if self.end > len(messages) or self.start > self.end:
            return messages  # the transcript was replaced: this record no longer applies
        middle = [self.summary] if self.summary is not None else []
        return [*messages[: self.start], *middle, *messages[self.end :]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "summary": None if self.summary is None else self.summary.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Compaction:
        start, end = data.get("start"), data.get("end")
        if type(start) is not int or type(end) is not int or not 0 <= start <= end:
            raise InputError(f"a compaction needs ints 0 <= start <= end, got {start!r}, {end!r}")
        summary = data.get("summary")
        return cls(start, end, None if summary is None else Message.from_dict(summary))


def view_of(messages: list[Message], compaction: Compaction | None) -> list[Message]:
    """The messages the model sees (the transcript itself when nothing was compacted)."""
    return messages if compaction is None else compaction.view(messages)
