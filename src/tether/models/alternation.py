"""Conversations for APIs that want strictly alternating user/assistant turns (Anthropic, Bedrock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.models.base import ModelRequest


def alternating(
    request: ModelRequest, block: Callable[[Any], dict[str, Any] | None]
) -> list[dict[str, Any]]:
    """The request's messages as alternating user/assistant turns of provider blocks.

    System messages are left out (they travel separately), tool results ride in a
    user turn, consecutive turns of one role are merged, and a message whose blocks
    all convert to None is skipped. ``block`` converts one content block.
    """
    out: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for b in (block(x) for x in message.content) if b is not None]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out
