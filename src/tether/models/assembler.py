"""Folds a model's delta stream into a ModelResponse; shared by every provider."""

from __future__ import annotations

import json
from typing import Any

from tether.errors import ModelError
from tether.events import (
    ModelFallback,
    ModelRetry,
    ModelStop,
    ModelStreamEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from tether.messages import (
    ContentBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolCall,
    sanitize_json,
    sanitize_text,
)
from tether.models.base import ModelResponse


class _PendingCall:
    __slots__ = ("args_dict", "args_text", "id", "name")

    def __init__(self) -> None:
        self.id: str | None = None
        self.name: str | None = None
        self.args_text: list[str] = []
        self.args_dict: dict[str, Any] | None = None


class ResponseAssembler:
    """Accumulates text, reasoning and tool-call fragments in arrival order."""

    __slots__ = ("_blocks", "_calls", "_reasoning", "_text", "stop")

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._blocks: list[ContentBlock] = []
        self._calls: dict[int, _PendingCall] = {}
        self.stop: ModelStop | None = None

    def add(self, event: ModelStreamEvent) -> None:
        kind = type(event)
        if kind is TextDelta:
            self._text.append(event.text)  # type: ignore[union-attr]
        elif kind is ReasoningDelta:
            self._add_reasoning(event)  # type: ignore[arg-type]
        elif kind is ToolCallDelta:
            self._add_call(event)  # type: ignore[arg-type]
        elif kind is ModelStop:
            self.stop = event  # type: ignore[assignment]
        elif kind is ModelRetry or kind is ModelFallback:
            pass  # recovery notices: counted by the loop, not part of the response
        else:
            raise ModelError(f"a model stream yielded {event!r}, which is not a model event")

    def _add_reasoning(self, event: ReasoningDelta) -> None:
        if event.redacted:
            self._blocks.append(ReasoningBlock("", signature=event.signature, redacted=True))
            return
        self._reasoning.append(event.text)
        if event.signature is not None:
            text = sanitize_text("".join(self._reasoning))
            self._blocks.append(ReasoningBlock(text, signature=event.signature))
            self._reasoning.clear()

    def _add_call(self, event: ToolCallDelta) -> None:
        call = self._calls.get(event.index)
        if call is None:
            call = self._calls[event.index] = _PendingCall()
        if event.id:
            call.id = event.id
        if event.name:
            call.name = (call.name or "") + event.name
        if isinstance(event.arguments, dict):
            call.args_dict = event.arguments
        elif event.arguments:
            call.args_text.append(event.arguments)

    def pending_description(self) -> str:
        """Describe what was in flight, for an error about a stream that ended early."""
        names = [c.name or f"#{i}" for i, c in self._calls.items()]
        if names:
            return f"tool call(s) {', '.join(repr(n) for n in names)} may be incomplete"
        return f"{len(''.join(self._text))} characters of text had arrived"

    def finish(self) -> ModelResponse:
        """Build the response; call only after a ``ModelStop`` arrived."""
        assert self.stop is not None
        blocks = self._blocks
        if self._reasoning:
            blocks.append(ReasoningBlock(sanitize_text("".join(self._reasoning))))
        if self._text:
            text = sanitize_text("".join(self._text))
            if text:
                blocks.append(TextBlock(text))
        errors: dict[str, str] = {}
        for index in sorted(self._calls):
            pending = self._calls[index]
            call_id = pending.id or f"call_{index}"
            args: dict[str, Any]
            if pending.args_dict is not None:
                args = sanitize_json(pending.args_dict)
            else:
                raw = "".join(pending.args_text).strip()
                args, error = _parse_arguments(raw)
                if error is not None:
                    errors[call_id] = error
            blocks.append(ToolCall(call_id, pending.name or "", args))
        stop_reason = self.stop.stop_reason
        if self._calls and stop_reason == "end_turn":
            stop_reason = "tool_use"
        message = Message("assistant", blocks, usage=self.stop.usage)
        return ModelResponse(message, stop_reason, self.stop.usage, errors)


def _parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    if not raw:
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        snippet = raw if len(raw) <= 200 else raw[:200] + "..."
        return {}, f"the arguments are not valid JSON ({exc}): {snippet}"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {type(value).__name__}"
    return sanitize_json(value), None
