"""tether messages and tool specs to the Anthropic Messages layout, and stop reasons back."""

from __future__ import annotations

from typing import Any

from tether.events import ModelStopReason
from tether.messages import ReasoningBlock, TextBlock, ToolCall, ToolResult, Usage
from tether.models.alternation import alternating
from tether.models.base import ModelRequest

_STOP: dict[str, ModelStopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "end_turn",
    "refusal": "content_filter",
}


def stop_reason(value: str | None) -> ModelStopReason:
    """Anthropic's stop_reason as a tether stop reason (unknown values count as end_turn)."""
    return _STOP.get(value or "end_turn", "end_turn")


def usage_from(start: Any, delta: Any) -> Usage:
    """Usage from message_start's usage and message_delta's usage (either may be None)."""
    usage = Usage()
    for source in (start, delta):
        if source is None:
            continue
        usage.input_tokens = getattr(source, "input_tokens", None) or usage.input_tokens
        usage.output_tokens = getattr(source, "output_tokens", None) or usage.output_tokens
        read = getattr(source, "cache_read_input_tokens", None)
        write = getattr(source, "cache_creation_input_tokens", None)
        usage.cache_read_tokens = read or usage.cache_read_tokens
        usage.cache_write_tokens = write or usage.cache_write_tokens
    return usage


def tools_param(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": spec["name"],
            "description": spec.get("description", ""),
            "input_schema": spec.get("input_schema") or {"type": "object", "properties": {}},
        }
        for spec in specs
    ]


def system_param(request: ModelRequest) -> str:
    parts = [request.system_prompt] if request.system_prompt else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts)


def messages_param(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation as alternating user/assistant messages.

    Tool results go in a user message as ``tool_result`` blocks; consecutive
    messages of one role are merged; reasoning is sent back only when signed.
    """
    return alternating(request, _block)


def _with_images(result: ToolResult) -> list[dict[str, Any]]:
    """A tool result's text and images as tool_result content blocks."""
    blocks: list[dict[str, Any]] = (
        [{"type": "text", "text": result.content}] if result.content else []
    )
    for image in result.images:
        source = {"type": "base64", "media_type": image.media_type, "data": image.data}
        blocks.append({"type": "image", "source": source})
    return blocks


def _block(block: Any) -> dict[str, Any] | None:
    kind = type(block)
    if kind is TextBlock:
        return {"type": "text", "text": block.text} if block.text else None
    if kind is ToolCall:
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
    if kind is ToolResult:
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_call_id,
            "content": _with_images(block) if block.images else block.content,
            "is_error": block.is_error,
        }
    if kind is ReasoningBlock and block.signature:
        if block.redacted:
            return {"type": "redacted_thinking", "data": block.signature}
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    return None


_ANTHROPIC_CHOICES = {"auto": "auto", "required": "any", "none": "none"}


def tool_choice_param(choice: str) -> dict[str, Any]:
    """``ModelRequest.tool_choice`` in Messages form (``required`` is ``any``)."""
    kind = _ANTHROPIC_CHOICES.get(choice)
    return {"type": kind} if kind is not None else {"type": "tool", "name": choice}
