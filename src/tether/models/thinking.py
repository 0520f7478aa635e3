"""Splits streamed text into visible text and reasoning at ``<think>``-style tags.

Tags may be split across chunks; text that only looks like the start of a tag
is held back until the next chunk decides. A lone ``<`` passes through.
"""

from __future__ import annotations

from tether.events import ReasoningDelta, TextDelta

_TAGS = {"<think>": "</think>", "<thinking>": "</thinking>", "<reasoning>": "</reasoning>"}


class ThinkTagFilter:
    """Feed text chunks in order; get ``TextDelta`` / ``ReasoningDelta`` events back."""

    __slots__ = ("_close", "_pending")

    def __init__(self) -> None:
        self._pending = ""
        self._close: str | None = None

    @property
    def idle(self) -> bool:
        """True when a chunk without ``<`` can pass straight through as text."""
        return self._close is None and not self._pending

    def feed(self, chunk: str) -> list[TextDelta | ReasoningDelta]:
        out: list[TextDelta | ReasoningDelta] = []
        text = self._pending + chunk
        self._pending = ""
        while text:
            if self._close is None:
                start = text.find("<")
                if start < 0:
                    out.append(TextDelta(text))
                    break
                if start:
                    out.append(TextDelta(text[:start]))
                    text = text[start:]
                opened = next((t for t in _TAGS if text.startswith(t)), None)
                if opened is not None:
                    self._close = _TAGS[opened]
                    text = text[len(opened) :]
                    continue
                if any(t.startswith(text) for t in _TAGS):
                    self._pending = text  # maybe the start of a tag: wait for more
                    break
                out.append(TextDelta("<"))
                text = text[1:]
            else:
                close = self._close
                end = text.find(close)
                if end >= 0:
                    if end:
                        out.append(ReasoningDelta(text[:end]))
                    text = text[end + len(close) :]
                    self._close = None
                    continue
                keep = _partial_suffix(text, close)
                if len(text) > keep:
                    out.append(ReasoningDelta(text[: len(text) - keep]))
                self._pending = text[len(text) - keep :] if keep else ""
                break
        return _merge(out)

    def flush(self) -> list[TextDelta | ReasoningDelta]:
        """Emit what is held back at the end of the response."""
        pending, self._pending = self._pending, ""
        if not pending:
            return []
        return [ReasoningDelta(pending) if self._close is not None else TextDelta(pending)]


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def _merge(events: list[TextDelta | ReasoningDelta]) -> list[TextDelta | ReasoningDelta]:
    if len(events) < 2:
        return events
    merged: list[TextDelta | ReasoningDelta] = [events[0]]
    for event in events[1:]:
        last = merged[-1]
        if type(event) is type(last):
            last.text += event.text
        else:
            merged.append(event)
    return merged
