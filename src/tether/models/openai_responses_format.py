"""tether messages and tool specs to the OpenAI Responses API's input items, and back.

The request is stateless: the whole conversation goes in ``input`` every call
(never ``previous_response_id``), so a session resumed in another process sends
exactly what the first process would have. A reasoning item comes back as a
:class:`ReasoningBlock` whose ``signature`` holds the item's id and encrypted
content (:func:`reasoning_signature`); the journal keeps it with the assistant
message and :func:`input_items` sends it back.
"""

from __future__ import annotations

import json
from typing import Any

from tether.events import ModelStopReason
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult, Usage
from tether.models.base import TOOL_CHOICES, ModelRequest

_MARK = "openai-responses"
"""The ``kind`` of a signature this module wrote (others, such as Anthropic's, are not sent)."""

_INCOMPLETE: dict[str, ModelStopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
}


def reasoning_signature(item_id: str, encrypted: str) -> str:
    """The ReasoningBlock signature of a reasoning item (its id and encrypted content)."""
    return json.dumps(
        {"kind": _MARK, "id": item_id, "encrypted_content": encrypted}, separators=(",", ":")
    )


def _reasoning_item(block: ReasoningBlock) -> dict[str, Any] | None:
    """The reasoning input item of ``block``, or None when its signature is not ours."""
    if not block.signature or not block.signature.startswith("{"):
        return None
    try:
        data = json.loads(block.signature)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("kind") != _MARK:
        return None
    item_id, encrypted = data.get("id"), data.get("encrypted_content")
    if not isinstance(item_id, str) or not isinstance(encrypted, str):
        return None
    summary = [{"type": "summary_text", "text": block.text}] if block.text else []
    return {"type": "reasoning", "id": item_id, "summary": summary, "encrypted_content": encrypted}


def stop_reason(status: str | None, incomplete_reason: str | None) -> ModelStopReason:
    """A response's status (and incomplete reason) as a tether stop reason."""
    if status == "incomplete":
        return _INCOMPLETE.get(incomplete_reason or "", "max_tokens")
    return "end_turn"


def usage_from(raw: Any) -> Usage:
    """Usage from a Responses ``usage`` object (or None); ``input_tokens`` include cached
    ones, ``output_tokens`` include the ``reasoning_tokens``."""
    if raw is None:
        return Usage()
    details = getattr(raw, "input_tokens_details", None)
    reasoning = getattr(raw, "output_tokens_details", None)
    return Usage(
        input_tokens=int(getattr(raw, "input_tokens", 0) or 0),
        output_tokens=int(getattr(raw, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(details, "cached_tokens", 0) or 0),
        cache_write_tokens=int(getattr(details, "cache_write_tokens", 0) or 0),
        reasoning_tokens=int(getattr(reasoning, "reasoning_tokens", 0) or 0),
    )


def tools_param(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": spec["name"],
            "description": spec.get("description", ""),
            "parameters": spec.get("input_schema") or {"type": "object", "properties": {}},
            "strict": False,
        }
        for spec in specs
    ]


def tool_choice_param(choice: str) -> str | dict[str, Any]:
    """``ModelRequest.tool_choice`` in Responses form (a name: ``{"type": "function", ...}``)."""
    if choice in TOOL_CHOICES:
        return choice
    return {"type": "function", "name": choice}


def input_items(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's conversation as Responses input items (the system prompt goes in
    ``instructions``). Reasoning is sent back only with our own signature."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        out.extend(_convert(message))
    return out


def _output(result: ToolResult) -> str | list[dict[str, Any]]:
    if not result.images:
        return result.content
    parts: list[dict[str, Any]] = (
        [{"type": "input_text", "text": result.content}] if result.content else []
    )
    for image in result.images:
        url = f"data:{image.media_type};base64,{image.data}"
        parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def _convert(message: Message) -> list[dict[str, Any]]:
    if message.role == "assistant":
        out: list[dict[str, Any]] = []
        for block in message.content:
            kind = type(block)
            if kind is ReasoningBlock:
                item = _reasoning_item(block)  # type: ignore[arg-type]
                if item is not None:
                    out.append(item)
            elif kind is TextBlock and block.text:  # type: ignore[union-attr]
                out.append({"role": "assistant", "content": block.text})  # type: ignore[union-attr]
            elif kind is ToolCall:
                call: ToolCall = block  # type: ignore[assignment]
                out.append(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": json.dumps(call.arguments),
                    }
                )
        return out
    text = "".join(b.text for b in message.content if type(b) is TextBlock)
    if message.role == "tool":
        out = [
            {"type": "function_call_output", "call_id": b.tool_call_id, "output": _output(b)}
            for b in message.content
            if type(b) is ToolResult
        ]
        if text:
            out.append({"role": "user", "content": text})
        return out
    return [{"role": message.role, "content": text}]
