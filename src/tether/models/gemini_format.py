"""tether messages and tool specs to the Gemini ``generateContent`` layout, and responses back.

Roles are ``user`` and ``model``; tool results are ``functionResponse`` parts of a user
turn (images returned by a tool follow them as ``inlineData`` parts, which every
multimodal Gemini model reads). A thought signature (Gemini's opaque token that must
travel back with the part it came on) is kept as a :class:`ReasoningBlock` signature
tagged with that part: ``<call id>|<base64>`` for a function call, ``|<base64>`` for text.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from typing import Any

from tether.events import ModelStopReason
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult, Usage
from tether.models.base import ModelRequest
from tether.models.failover import snippet

LOCAL_ID = "gemini_call_"
"""Prefix of the ids tether gives function calls that came without one (never sent back)."""

_STOP: dict[str, ModelStopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "OTHER": "end_turn",
    "FINISH_REASON_UNSPECIFIED": "end_turn",
}

BLOCKED = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
    }
)
"""Finish reasons that mean Gemini withheld the answer: stop reason ``content_filter``."""

MALFORMED = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"})
"""Finish reasons for a function call Gemini could not produce (a format error)."""


def enum_name(value: Any) -> str:
    """An SDK enum (or a plain string) as its name: ``FinishReason.SAFETY`` -> ``SAFETY``."""
    if value is None:
        return ""
    return str(getattr(value, "value", value))


def stop_reason(finish: str) -> ModelStopReason:
    """Gemini's finishReason as a tether stop reason (unknown values count as end_turn)."""
    if finish in BLOCKED:
        return "content_filter"
    return _STOP.get(finish or "STOP", "end_turn")


def usage_from(meta: Any) -> Usage:
    """Usage from ``usageMetadata``: the prompt count includes the cached tokens, and
    thinking tokens are output tokens (billed as such)."""
    if meta is None:
        return Usage()
    output = (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    return Usage(
        input_tokens=int(prompt),
        output_tokens=int(output),
        cache_read_tokens=int(meta.cached_content_token_count or 0),
    )


def blocked_text(what: str, reason: str, ratings: Any, message: str | None = None) -> str:
    """The answer tether gives for a blocked prompt or response (never an empty one)."""
    flagged = [
        f"{enum_name(r.category).removeprefix('HARM_CATEGORY_')}: {enum_name(r.probability)}"
        for r in list(ratings or ())[:8]  # provider data: bounded
        if getattr(r, "blocked", False)
        or enum_name(getattr(r, "probability", "")) in ("MEDIUM", "HIGH")
    ]
    text = f"[Gemini blocked the {what}: {snippet(reason, 60)}"
    if flagged:
        text += f" ({snippet(', '.join(flagged), 300)})"
    if message:
        text += f"; {snippet(message, 200)}"
    return text + "]"


def local_id(index: int) -> str:
    return f"{LOCAL_ID}{index}_{uuid.uuid4().hex[:8]}"


def signature_of(target: str, raw: bytes) -> str:
    """A thought signature as a ReasoningBlock signature tagged with its part."""
    return f"{target}|{base64.b64encode(raw).decode('ascii')}"


def _signatures(message: Message) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for block in message.content:
        if type(block) is ReasoningBlock and block.signature and "|" in block.signature:
            target, _, data = block.signature.rpartition("|")
            try:
                out[target] = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                continue  # not a Gemini signature (another provider's): not sent
    return out


def tools_param(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool specs as one Tool of function declarations (JSON Schema parameters)."""
    declarations = [
        {
            "name": spec["name"],
            "description": spec.get("description", ""),
            "parameters_json_schema": spec.get("input_schema")
            or {"type": "object", "properties": {}},
        }
        for spec in specs
    ]
    return [{"function_declarations": declarations}]


def tool_config_param(choice: str) -> dict[str, Any]:
    """``ModelRequest.tool_choice`` as Gemini's ``function_calling_config``: ``auto`` is
    AUTO, ``required`` ANY, ``none`` NONE, a tool's name ANY limited to that function."""
    modes = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
    if choice in modes:
        return {"function_calling_config": {"mode": modes[choice]}}
    return {"function_calling_config": {"mode": "ANY", "allowed_function_names": [choice]}}


def system_instruction(request: ModelRequest) -> str | None:
    parts = [request.system_prompt] if request.system_prompt else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts) or None


def contents_param(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation as Gemini contents; consecutive turns of one role are merged."""
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        role = "model" if message.role == "assistant" else "user"
        parts = _model_parts(message) if role == "model" else _user_parts(message)
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


def _model_parts(message: Message) -> list[dict[str, Any]]:
    signatures = _signatures(message)
    parts: list[dict[str, Any]] = []
    text = "".join(b.text for b in message.content if type(b) is TextBlock)
    if text or "" in signatures:
        part: dict[str, Any] = {"text": text}
        if "" in signatures:
            part["thought_signature"] = signatures[""]
        parts.append(part)
    for block in message.content:
        if type(block) is not ToolCall:
            continue
        call: dict[str, Any] = {"name": block.name, "args": block.arguments}
        if not block.id.startswith(LOCAL_ID):
            call["id"] = block.id
        part = {"function_call": call}
        if block.id in signatures:
            part["thought_signature"] = signatures[block.id]
        parts.append(part)
    return parts


def _user_parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []
    for block in message.content:
        if type(block) is TextBlock and block.text:
            parts.append({"text": block.text})
        elif type(block) is ToolResult:
            key = "error" if block.is_error else "output"
            response: dict[str, Any] = {"name": block.name, "response": {key: block.content}}
            if not block.tool_call_id.startswith(LOCAL_ID):
                response["id"] = block.tool_call_id
            parts.append({"function_response": response})
            images += _image_parts(block)
    return parts + images


def _image_parts(result: ToolResult) -> list[dict[str, Any]]:
    if not result.images:
        return []
    count = len(result.images)
    label = "image" if count == 1 else f"{count} images"
    parts: list[dict[str, Any]] = [
        {"text": f"The {label} returned by tool call {result.tool_call_id} ({result.name}):"}
    ]
    for image in result.images:
        data = {"mime_type": image.media_type, "data": base64.b64decode(image.data)}
        parts.append({"inline_data": data})
    return parts
