"""Native <-> wire translation for each AGENT-HOOKS interception point.

``*_wire`` functions project tether objects onto the AgentContext shapes of
AGENT-HOOKS-0.1 (section 4); ``*_back`` functions write a transformed wire
value back into a new tether object, or raise :class:`WriteBackError` when the
value does not fit (the host then fails the point closed). Write-back keeps
what the wire does not carry (reasoning blocks, tool result status) from the
original object whenever the wire projection of it is unchanged.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from tether.errors import TetherError
from tether.messages import ContentBlock, Image, Message, TextBlock, ToolCall, ToolResult
from tether.models.base import ModelResponse
from tether.tools.output import format_tool_output

FINISH_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filter": "content_filter",
}
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_ROLES = ("system", "user", "assistant", "tool")


class WriteBackError(TetherError, ValueError):
    """A transformed value cannot be written back into the native object."""


def text_of(message: Message) -> str | None:
    """The message's visible text (None when it has no text block)."""
    parts = [b.text for b in message.content if type(b) is TextBlock]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "".join(parts)


def call_wire(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "args": dict(call.arguments)}


def message_wire(message: Message) -> list[dict[str, Any]]:
    """One message as wire messages (a tool message gives one per result)."""
    if message.role == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": r.tool_call_id,
                "name": r.name,
                "content": r.content,
                "is_error": r.is_error,
            }
            for r in message.content
            if type(r) is ToolResult
        ]
    out: dict[str, Any] = {"role": message.role, "content": text_of(message)}
    calls = message.tool_calls
    if calls:
        out["tool_calls"] = [call_wire(c) for c in calls]
    return [out]


def messages_wire(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        out.extend(message_wire(message))
    return out


class WireCache:
    """The wire form of a history that grows between model calls: each message is converted
    once. The messages kept from the last call are found by identity (or equality, which
    gives the same wire form), so a message that was replaced (a transform, a reset) is
    converted again. Each call returns a new list of the cached wire dicts; the caller must
    not change those dicts (the emitter hands interceptors copies)."""

    __slots__ = ("ends", "flat", "messages")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.flat: list[dict[str, Any]] = []
        self.ends: list[int] = []
        """``ends[i]``: where message i's wire messages end in ``flat``."""

    def of(self, messages: list[Message]) -> list[dict[str, Any]]:
        known, flat, ends = self.messages, self.flat, self.ends
        keep = len(known)
        # The usual case, the last call's messages plus new ones, is one C-level comparison
        # (identity first; an equal message has the same wire form).
        if len(messages) < keep or messages[:keep] != known:
            keep = 0
            limit = min(len(known), len(messages))
            while keep < limit and messages[keep] is known[keep]:
                keep += 1
            del known[keep:], ends[keep:], flat[ends[-1] if ends else 0 :]
        for message in messages[keep:]:
            known.append(message)
            flat.extend(message_wire(message))
            ends.append(len(flat))
        return flat[:]


def messages_back(original: list[Message], wire: Any) -> list[Message]:
    """The messages a transformed ``pre_model_call`` target stands for."""
    if not isinstance(wire, list):
        raise WriteBackError(f"messages must be a list, got {type(wire).__name__}")
    groups: list[list[dict[str, Any]]] = []
    for item in wire:
        if not isinstance(item, dict) or item.get("role") not in _ROLES:
            raise WriteBackError(f"not a message with a role in {_ROLES}: {item!r:.80}")
        if item["role"] == "tool" and groups and groups[-1][0]["role"] == "tool":
            groups[-1].append(item)
        else:
            groups.append([item])
    known = {json.dumps(message_wire(m), sort_keys=True): m for m in original}
    out: list[Message] = []
    images: dict[str, tuple[Image, ...]] | None = None
    for group in groups:
        same = known.get(json.dumps(group, sort_keys=True))
        if same is None:
            same = _message_from(group)
            if same.role == "tool":  # a changed tool message keeps its results' images
                images = _images(original) if images is None else images
                same = _with_images(same, images)
        out.append(same)
    return out


def _images(messages: list[Message]) -> dict[str, tuple[Image, ...]]:
    """The images of every tool result in ``messages``, by tool call id."""
    return {
        r.tool_call_id: r.images
        for m in messages
        if m.role == "tool"
        for r in m.content
        if type(r) is ToolResult and r.images
    }


def _with_images(message: Message, images: dict[str, tuple[Image, ...]]) -> Message:
    if not images:
        return message
    content: list[ContentBlock] = []
    for block in message.content:
        if type(block) is ToolResult and block.tool_call_id in images:
            block = replace(block, images=images[block.tool_call_id])
        content.append(block)
    return Message(message.role, content)


def _message_from(group: list[dict[str, Any]]) -> Message:
    head = group[0]
    if head["role"] == "tool":
        return Message("tool", [_result_from(item) for item in group])
    content: list[ContentBlock] = []
    text = head.get("content")
    if text is not None:
        content.append(TextBlock(_string(text, "content")))
    calls = head.get("tool_calls") or []
    if not isinstance(calls, list):
        raise WriteBackError("tool_calls must be a list")
    content.extend(_call_from(c) for c in calls)
    return Message(head["role"], content)


def _result_from(item: dict[str, Any]) -> ToolResult:
    is_error = item.get("is_error", False)
    if not isinstance(is_error, bool):
        raise WriteBackError("a tool message's is_error must be a boolean")
    return ToolResult(
        _string(item.get("tool_call_id"), "tool_call_id"),
        _string(item.get("name", ""), "name"),
        _string(item.get("content"), "content"),
        is_error,
        "error" if is_error else "ok",
    )


def _call_from(item: Any) -> ToolCall:
    if not isinstance(item, dict) or not isinstance(item.get("args"), dict):
        raise WriteBackError(f"a tool call needs id, name and an args object: {item!r:.80}")
    return ToolCall(_string(item.get("id"), "id"), _string(item.get("name"), "name"), item["args"])


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise WriteBackError(f"{what} must be a string, got {type(value).__name__}")
    return value


def with_text(message: Message, text: Any) -> Message:
    """``message`` with its visible text replaced (reasoning and tool calls kept)."""
    if text is not None:
        text = _string(text, "content")
    blocks: list[ContentBlock] = [b for b in message.content if type(b) is not TextBlock]
    if text:
        first_call = next((i for i, b in enumerate(blocks) if type(b) is ToolCall), len(blocks))
        blocks.insert(first_call, TextBlock(text))
    return Message(message.role, blocks)


def input_back(message: Message, wire: Any) -> Message:
    if not isinstance(wire, dict):
        raise WriteBackError(f"input must be an object, got {type(wire).__name__}")
    role = wire.get("role", message.role)
    if role not in _ROLES:
        raise WriteBackError(f"input role must be one of {_ROLES}, got {role!r}")
    return Message(role, with_text(message, wire.get("content")).content)


def response_wire(response: ModelResponse) -> dict[str, Any]:
    return {
        "content": text_of(response.message),
        "tool_calls": [call_wire(c) for c in response.message.tool_calls],
        "finish_reason": FINISH_REASONS.get(response.stop_reason, "stop"),
    }


def response_back(response: ModelResponse, wire: Any) -> ModelResponse:
    if not isinstance(wire, dict):
        raise WriteBackError(f"response must be an object, got {type(wire).__name__}")
    calls = wire.get("tool_calls") or []
    if not isinstance(calls, list):
        raise WriteBackError("response.tool_calls must be a list")
    message = with_text(response.message, wire.get("content"))
    blocks = [b for b in message.content if type(b) is not ToolCall]
    blocks.extend(_call_from(c) for c in calls)
    stop = _STOP_REASONS.get(str(wire.get("finish_reason")), response.stop_reason)
    if calls and stop != "tool_use":
        stop = "tool_use"
    elif not calls and stop == "tool_use":
        stop = "end_turn"
    kept = {k: v for k, v in response.argument_errors.items() if any(c["id"] == k for c in calls)}
    return ModelResponse(Message("assistant", blocks), stop, response.usage, kept)  # type: ignore[arg-type]


def args_back(call: ToolCall, wire: Any) -> ToolCall:
    if not isinstance(wire, dict):
        raise WriteBackError(f"tool arguments must be an object, got {type(wire).__name__}")
    return ToolCall(call.id, call.name, wire)


def result_value(result: ToolResult) -> Any:
    """The wire value of a tool result: JSON objects and arrays decoded, else the text."""
    text = result.content
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def result_back(result: ToolResult, wire: Any) -> ToolResult:
    try:
        text = format_tool_output(wire)
    except Exception as exc:  # pragma: no cover - format_tool_output never raises
        raise WriteBackError(str(exc)) from exc
    # the wire carries no images: those the transform could not touch stay attached
    return ToolResult(
        result.tool_call_id, result.name, text, result.is_error, result.status, images=result.images
    )


def output_back(message: Message, wire: Any) -> Message:
    if not isinstance(wire, dict):
        raise WriteBackError(f"output must be an object, got {type(wire).__name__}")
    return with_text(message, wire.get("content"))
