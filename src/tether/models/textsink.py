"""Visible-text post-processing shared by the adapters: think tags, lenient tool calls."""

from __future__ import annotations

from collections.abc import Collection

from tether.events import ReasoningDelta, TextDelta, ToolCallDelta
from tether.models.lenient import extract_tool_calls
from tether.models.thinking import ThinkTagFilter

TextEvent = TextDelta | ReasoningDelta | ToolCallDelta


class TextSink:
    """Routes provider text through the think-tag filter (and the lenient parser).

    With ``lenient`` the visible text is held until :meth:`finish`, which turns
    tool calls written into the text into ``ToolCallDelta`` events.
    """

    __slots__ = ("_filter", "_held", "_lenient", "_tool_names", "emitted")

    def __init__(self, *, lenient: bool = False, tool_names: Collection[str] = ()) -> None:
        self._filter = ThinkTagFilter()
        self._lenient = lenient
        self._tool_names = tool_names
        self._held: list[str] = []
        self.emitted = False
        """True once any text or reasoning went out."""

    def passthrough(self, chunk: str) -> bool:
        """True when ``chunk`` can be yielded as a plain TextDelta without processing."""
        if self._lenient or not self._filter.idle or "<" in chunk:
            return False
        self.emitted = True
        return True

    def text(self, chunk: str) -> list[TextEvent]:
        events: list[TextEvent] = []
        for event in self._filter.feed(chunk):
            self._route(event, events)
        return events

    def finish(self, next_index: int, native_calls: bool) -> list[TextEvent]:
        """Flush held text; ``next_index`` is the first free tool-call index."""
        events: list[TextEvent] = []
        for event in self._filter.flush():
            self._route(event, events)
        if not self._held:
            return events
        text = "".join(self._held)
        self._held.clear()
        calls: list[tuple[str, dict[str, object]]] = []
        if not native_calls:
            text, calls = extract_tool_calls(text, self._tool_names)
        if text:
            events.append(TextDelta(text))
        for offset, (name, args) in enumerate(calls):
            index = next_index + offset
            events.append(ToolCallDelta(index, f"call_lenient_{index}", name, dict(args)))
        self.emitted = self.emitted or bool(events)
        return events

    def _route(self, event: TextDelta | ReasoningDelta, out: list[TextEvent]) -> None:
        if self._lenient and type(event) is TextDelta:
            self._held.append(event.text)
            return
        self.emitted = True
        out.append(event)
