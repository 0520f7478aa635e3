"""Attribute names and values: the GenAI semantic conventions plus tether's own ``tether.*``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.messages import Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from tether.governance.masks import Masker
    from tether.models.base import Model

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
COST = "tether.usage.cost"
"""USD of a call (a chat span) or an invocation (invoke_agent), a double; set only when
known. No GenAI semantic convention names a cost attribute."""
FINISH_REASONS = "gen_ai.response.finish_reasons"
CONVERSATION = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOKEN_TYPE = "gen_ai.token.type"
ERROR_TYPE = "error.type"

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' switch for recording message content (off by default)."""

_PROVIDERS = {"bedrock": "aws.bedrock", "openai-compatible": "openai"}


def capture_from_env() -> bool:
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def provider_of(model: Model) -> str:
    """``gen_ai.provider.name`` of a model (``tether`` for in-process models)."""
    first = first_model(model)
    provider = getattr(first, "provider", None)
    if isinstance(provider, str) and provider:
        return _PROVIDERS.get(provider, provider)
    return "tether"


def provider_named(model: Model, name: str) -> str | None:
    """The provider of the model called ``name`` inside ``model`` (a FallbackChain), if any."""
    if model.name == name:
        return provider_of(model)
    for inner in getattr(model, "models", None) or ():
        found = provider_named(inner, name)
        if found is not None:
            return found
    return None


def first_model(model: Model) -> Model:
    """The model a call goes to first (a FallbackChain's primary)."""
    models = getattr(model, "models", None)
    if isinstance(models, list) and models:
        return first_model(models[0])
    return model


def limit_attributes(limits: Any) -> dict[str, Any]:
    if limits is None:
        return {}
    out: dict[str, Any] = {}
    for name in ("turns", "total_tokens", "output_tokens", "wall_seconds", "tool_calls"):
        value = getattr(limits, name, None)
        if value is not None:
            out[f"tether.limits.{name}"] = value
    cost = getattr(limits, "cost", None)
    if cost is not None:
        out["tether.limits.cost"] = float(cost)
    return out


def _parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            parts.append({"type": "text", "content": block.text})
        elif block.type == "reasoning":
            parts.append({"type": "reasoning", "content": block.text})
        elif block.type == "tool_call":
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": block.arguments,
                }
            )
        elif block.type == "tool_result":
            parts.append(
                {"type": "tool_call_response", "id": block.tool_call_id, "response": block.content}
            )
    return parts


def messages_json(messages: Sequence[Message], masker: Masker) -> str:
    """``gen_ai.input.messages`` / ``output.messages``: redacted through the session views' path."""
    from tether.governance.redaction import show_messages

    shown = show_messages(messages, masker=masker)
    return json.dumps(
        [{"role": m.role, "parts": _parts(m)} for m in shown], ensure_ascii=False, default=repr
    )


def tool_content(call: ToolCall, result: ToolResult | None, masker: Masker) -> dict[str, str]:
    """The redacted arguments (and result) of one call, for an ``execute_tool`` span."""
    from tether.governance.redaction import show_messages

    messages = [Message("assistant", [call])]
    if result is not None:
        messages.append(Message("tool", [result]))
    shown = show_messages(messages, masker=masker)  # arguments scrubbed of the tree's secrets
    arguments = shown[0].tool_calls[0].arguments
    out = {TOOL_ARGUMENTS: json.dumps(arguments, default=repr)}
    if result is not None:
        content = shown[1].tool_results[0].content
        out[TOOL_RESULT] = (
            content if isinstance(content, str) else json.dumps(content, default=repr)
        )
    return out
