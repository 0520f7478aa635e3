"""tether messages and tool specs to the OpenAI Chat Completions layout, and back for stop reasons."""

from __future__ import annotations

import json
from typing import Any

from tether.events import ModelStopReason
from tether.messages import Message, TextBlock, ToolCall, ToolResult, Usage
from tether.models.base import TOOL_CHOICES, ModelRequest

_STOP: dict[str, ModelStopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


def stop_reason(finish_reason: str | None) -> ModelStopReason:
    """OpenAI's finish_reason as a tether stop reason (unknown values count as end_turn)."""
    return _STOP.get(finish_reason or "stop", "end_turn")


def usage_from(raw: Any) -> Usage:
    """Usage from an OpenAI ``usage`` object (or None)."""
    if raw is None:
        return Usage()
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        input_tokens=int(getattr(raw, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=int(cached),
    )


def tools_param(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": spec["name"],
                "description": spec.get("description", ""),
                "parameters": spec.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for spec in specs
    ]


def messages_param(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's conversation as Chat Completions messages.

    A tool message becomes one ``role: "tool"`` message per result; reasoning
    blocks are not sent back (Chat Completions has no field for them).
    """
    out: list[dict[str, Any]] = []
    if request.system_prompt:
        out.append({"role": "system", "content": request.system_prompt})
    for message in request.messages:
        out.extend(_convert(message))
    return out


def _image_parts(results: list[ToolResult]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for result in results:
        count = len(result.images)
        parts.append(
            {
                "type": "text",
                "text": f"The {'image' if count == 1 else f'{count} images'} returned by tool "
                f"call {result.tool_call_id} ({result.name}):",
            }
        )
        for image in result.images:
            url = f"data:{image.media_type};base64,{image.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _convert(message: Message) -> list[dict[str, Any]]:
    text = "".join(b.text for b in message.content if type(b) is TextBlock)
    if message.role == "assistant":
        calls = [b for b in message.content if type(b) is ToolCall]
        entry: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            entry["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in calls
            ]
        elif not text:
            entry["content"] = ""
        return [entry]
    if message.role == "tool":
        results = [b for b in message.content if type(b) is ToolResult]
        out: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": b.tool_call_id, "content": b.content} for b in results
        ]
        # Chat tool messages carry text only: images follow in one user message.
        with_images = [b for b in results if b.images]
        if with_images:
            out.append({"role": "user", "content": _image_parts(with_images)})
        if text:
            out.append({"role": "user", "content": text})
        return out
    return [{"role": message.role, "content": text}]


def tool_choice_param(choice: str) -> str | dict[str, Any]:
    """``ModelRequest.tool_choice`` in Chat Completions form."""
    if choice in TOOL_CHOICES:
        return choice
    return {"type": "function", "function": {"name": choice}}
