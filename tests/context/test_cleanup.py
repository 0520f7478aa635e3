"""A request the provider rejects as malformed is cleaned up and retried once."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from fault_models import bedrock_at, claude_at, openai_at

from tether import Agent
from tether.context.cleanup import NO_RESULT, clean_history
from tether.events import ModelRetry
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from tether.models import ProviderError, RetryPolicy

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)


def _messy() -> list[Message]:
    call = ToolCall("c1", "lookup", {})
    return [
        Message.user("start"),
        Message("assistant", [TextBlock(""), ReasoningBlock("unsigned"), call]),
        Message("tool", [ToolResult("c1", "lookup", "ok"), ToolResult("ghost", "lookup", "x")]),
        Message("assistant", [TextBlock("  ")]),  # blank: dropped, leaves nothing
        Message.user("one"),
        Message.user("two"),  # consecutive user messages: merged
        Message("assistant", [ToolCall("c2", "lookup", {})]),  # a call with no result
        Message.user("three"),
    ]


def test_clean_history_fixes_what_providers_reject() -> None:
    messy = _messy()
    before = [m.to_dict() for m in messy]
    cleaned = clean_history(messy)
    assert [m.to_dict() for m in messy] == before  # the transcript is not changed
    assert [m.role for m in cleaned] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
        "user",
    ]
    assert cleaned[1].content == [ToolCall("c1", "lookup", {})]
    assert [r.tool_call_id for r in cleaned[2].tool_results] == ["c1"]
    assert [b.text for b in cleaned[3].content] == ["one", "two"]  # type: ignore[union-attr]
    assert cleaned[5].tool_results[0].content == NO_RESULT
    assert cleaned[5].tool_results[0].is_error


_openai = partial(openai_at, tag="cl", retry=FAST)
_claude = partial(claude_at, tag="cl", retry=FAST)
_bedrock = partial(bedrock_at, tag="cl", retry=FAST)


MAKERS = [("openai", _openai), ("anthropic", _claude), ("bedrock", _bedrock)]


@pytest.mark.parametrize(("wire", "make"), MAKERS)
def test_a_rejected_request_is_cleaned_and_retried_once(fault: Any, wire: str, make: Any) -> None:
    model = make(fault, "efmt,text")
    agent = Agent(model, store=None)
    agent.messages = _messy()[:-1]
    events: list[Any] = []

    async def run() -> None:
        async for event in agent.stream("three"):
            events.append(event)

    import asyncio

    asyncio.run(run())
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "end_turn"
    retries = [e for e in events if isinstance(e, ModelRetry)]
    assert [r.reason for r in retries] == ["format_error"]
    first, second = [r["body"] for r in fault.app.state.recorder.for_model(model.model)]
    assert "ghost" in str(first)
    assert "ghost" not in str(second)
    assert "unsigned" not in str(second)
    assert len(agent.messages) == 9  # the transcript itself is unchanged (plus prompt + reply)


def test_a_request_still_rejected_after_cleanup_fails_with_the_providers_words(fault: Any) -> None:
    model = _claude(fault, "efmt")
    agent = Agent(model, store=None)
    with pytest.raises(ProviderError) as info:
        agent("hi")
    assert info.value.reason.value == "format_error"
    assert "text content blocks must be non-empty" in str(info.value)
    assert len(fault.app.state.recorder.for_model(model.model)) == 2  # one cleanup retry
