"""The history invariant every test of a stopped or failed run checks."""

from __future__ import annotations

from tether import Message


def assert_history_valid(messages: list[Message]) -> None:
    """Every tool call of an assistant message is answered, in order, by the next (tool) message."""
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            answer = messages[index + 1]
            assert answer.role == "tool"
            assert [r.tool_call_id for r in answer.tool_results] == [
                c.id for c in message.tool_calls
            ]
