"""Prompt-cache breakpoints: Anthropic ``cache_control`` and Bedrock ``cachePoint``.

Three breakpoints: the system prompt, the tool definitions, and the rolling end
of the conversation (the last block of the last message), so each call reads
the previous call's prefix from the cache and writes only what was appended.
Together with a session's journaled system prompt (byte-identical on resume)
this makes the cache hit across invocations and processes.
"""

from __future__ import annotations

import re
from typing import Any

EPHEMERAL = {"type": "ephemeral"}
_NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking"})
_BEDROCK_CACHING = re.compile(
    r"anthropic\.claude-(3-5-haiku|3-7-sonnet|sonnet-4|opus-4|haiku-4)|amazon\.nova", re.I
)


def anthropic_breakpoints(body: dict[str, Any]) -> None:
    """Mark the system prompt, the last tool and the conversation's end in ``body``."""
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": EPHEMERAL}
    messages = body.get("messages") or []
    if messages:
        content = messages[-1]["content"]
        for index in range(len(content) - 1, -1, -1):
            if content[index].get("type") not in _NOT_CACHEABLE:
                content[index] = {**content[index], "cache_control": EPHEMERAL}
                break


def bedrock_caches(model_id: str) -> bool:
    """Whether Bedrock supports prompt caching for ``model_id`` (Claude 3.5 Haiku and
    later, Nova)."""
    return _BEDROCK_CACHING.search(model_id) is not None


def bedrock_breakpoints(body: dict[str, Any]) -> None:
    """Append ``cachePoint`` blocks after the system prompt, the tools (Claude only) and the
    last message of a Converse ``body``."""
    point = {"cachePoint": {"type": "default"}}
    if body.get("system"):
        body["system"] = [*body["system"], point]
    tools = body.get("toolConfig", {}).get("tools")
    if tools and "anthropic." in body.get("modelId", ""):
        body["toolConfig"]["tools"] = [*tools, point]
    messages = body.get("messages") or []
    if messages:
        messages[-1]["content"] = [*messages[-1]["content"], point]
