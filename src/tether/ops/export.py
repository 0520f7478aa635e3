"""Sessions as OpenAI-style chat messages: trajectories for evaluation and training data."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult

if TYPE_CHECKING:
    from tether.governance.redaction import EditedCall


def to_openai_messages(
    messages: Iterable[Message],
    *,
    include_reasoning: bool = False,
    system: str | None = None,
    ran: Mapping[str, EditedCall] | None = None,
) -> list[dict[str, Any]]:
    """Convert tether messages to Chat Completions messages.

    An assistant message keeps its text (``None`` when it only calls tools) and its
    ``tool_calls`` (arguments as a JSON string); a tool message with N results becomes
    N ``role: "tool"`` messages. Reasoning is dropped unless ``include_reasoning``,
    which adds a ``reasoning`` field (redacted reasoning is never exported).
    ``system`` prepends a system message (tether keeps the system prompt outside
    the session). ``ran`` (a :class:`~tether.governance.redaction.ShownSession`'s
    ``edits``): a call that ran with other arguments than the model's keeps the
    model's in ``function`` and gets ``ran_with: {arguments (a JSON string), by}``
    (``by``: who changed them, ``Transform by PinStaging; edited by alice``).
    """
    out: list[dict[str, Any]] = []
    if system is not None:
        out.append({"role": "system", "content": system})
    for message in messages:
        out.extend(_convert(message, include_reasoning, ran or {}))
    return out


def _convert(
    message: Message, include_reasoning: bool, ran: Mapping[str, EditedCall]
) -> list[dict[str, Any]]:
    text = "".join(b.text for b in message.content if type(b) is TextBlock)
    if message.role == "tool":
        out: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": b.tool_call_id, "content": b.content}
            for b in message.content
            if type(b) is ToolResult
        ]
        if text:  # stray text next to results: keep it, as the user turn it is
            out.append({"role": "user", "content": text})
        return out
    if message.role != "assistant":
        return [{"role": message.role, "content": text}]
    calls = [b for b in message.content if type(b) is ToolCall]
    entry: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    if calls:
        entry["tool_calls"] = [_call(c, ran.get(c.id)) for c in calls]
    if include_reasoning:
        thoughts = [b.text for b in message.content if type(b) is ReasoningBlock and not b.redacted]
        if thoughts:
            entry["reasoning"] = "\n".join(thoughts)
    return [entry]


def _call(call: ToolCall, ran: EditedCall | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }
    if ran is not None:
        out["ran_with"] = {"arguments": json.dumps(ran.arguments), "by": ran.label}
    return out
