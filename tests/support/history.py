"""The history invariant every test of a stopped or failed run checks."""

from __future__ import annotations

from typing import Any

import pytest

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


def assert_run_fails(agent: Any, prompt: str, error: type[BaseException], *fragments: str) -> Any:
    """Run ``agent(prompt)``, which must raise ``error`` naming every one of ``fragments``, carry
    the run's result (stopped with "error") and leave a valid history; returns the error."""
    with pytest.raises(error) as info:
        agent(prompt)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert_history_valid(agent.messages)
    return info.value
