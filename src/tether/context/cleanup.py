"""The history cleanup tried once after a provider rejects a request as malformed."""

from __future__ import annotations

from tether.messages import ContentBlock, Message, ReasoningBlock, TextBlock, ToolCall, ToolResult

NO_RESULT = "No result was recorded for this call."


def clean_history(messages: list[Message]) -> list[Message]:
    """``messages`` without what providers commonly reject.

    Drops empty or blank text blocks, reasoning blocks without their signature,
    tool results that answer no call of the message before them, and messages
    left empty; answers calls that have no result with an error result; merges
    consecutive messages of the same role. Returns new lists; the transcript is
    not changed.
    """
    out: list[Message] = []
    open_calls: dict[str, str] = {}
    for message in messages:
        content: list[ContentBlock] = []
        for block in message.content:
            kind = type(block)
            if kind is TextBlock and not block.text.strip():  # type: ignore[union-attr]
                continue
            if kind is ReasoningBlock and not block.signature:  # type: ignore[union-attr]
                continue
            if kind is ToolResult:
                if block.tool_call_id not in open_calls:  # type: ignore[union-attr]
                    continue
                open_calls.pop(block.tool_call_id)  # type: ignore[union-attr]
            content.append(block)
        if message.role != "tool" and open_calls:
            _answer(out, open_calls)
        if message.role == "assistant":
            open_calls = {c.id: c.name for c in content if type(c) is ToolCall}
        if not content:
            continue
        if out and out[-1].role == message.role:
            out[-1] = Message(message.role, [*out[-1].content, *content], out[-1].usage)
        else:
            out.append(Message(message.role, content, message.usage))
    return out


def _answer(out: list[Message], open_calls: dict[str, str]) -> None:
    results: list[ContentBlock] = [
        ToolResult(call_id, name, NO_RESULT, is_error=True, status="error")
        for call_id, name in open_calls.items()
    ]
    if out and out[-1].role == "tool":
        out[-1] = Message("tool", [*out[-1].content, *results])
    else:
        out.append(Message("tool", results))
    open_calls.clear()
