"""The history invariant every test of a stopped or failed run checks, and what a\ncancelled journal write must leave."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tether import Message
from tether.persistence import close_session


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


async def assert_cancelled_write_counted(agent: Any, journal: Any, write: Any) -> None:
    """``write`` (a journal append of status "running") was cancelled after the store took
    it: the caller sees the cancel, the write is kept, and the session's next append
    (status "idle") does not conflict with it."""
    with pytest.raises(asyncio.CancelledError):
        await write
    await journal.append("status", {"status": "idle"})
    await close_session(agent, journal)
    record = await agent.store.load(agent.session_id)
    assert record is not None
    assert [e.data["status"] for e in record.entries] == ["running", "idle"]
    await agent.store.close()
