"""Replies cut off at the output token limit: text continued and stitched, cut calls retried."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fault_models import bedrock_at, claude_at, openai_at

from tether import Agent, tool
from tether.context.truncated import CONTINUE_PROMPT
from tether.events import ReplyTruncated
from tether.models import AnthropicModel, BedrockModel, OpenAIModel, RetryPolicy, ScriptedModel

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _events(agent: Agent, prompt: str) -> list[Any]:
    async def run() -> list[Any]:
        return [e async for e in agent.stream(prompt)]

    return asyncio.run(run())


def test_a_cut_text_reply_is_continued_and_stitched() -> None:
    model = ScriptedModel(
        [
            {"text": "Hello wor", "stop_reason": "max_tokens"},
            {"text": "ld, and more", "stop_reason": "max_tokens"},
            {"text": "!"},
        ]
    )
    agent = Agent(model, store=None)
    events = _events(agent, "greet")
    result = agent.last_result
    assert result is not None
    assert result.stop_reason == "end_turn"
    assert result.text == "Hello world, and more!"
    assert result.usage.continuations == 2
    assert [e.action for e in events if isinstance(e, ReplyTruncated)] == ["continue"] * 2
    prompts = [m.text for m in agent.messages if m.role == "user"]
    assert prompts == ["greet", CONTINUE_PROMPT, CONTINUE_PROMPT]  # the transcript keeps the parts


def test_continuations_are_bounded_then_the_run_stops_with_max_tokens() -> None:
    model = ScriptedModel([{"text": f"part{i} ", "stop_reason": "max_tokens"} for i in range(4)])
    agent = Agent(model, store=None)
    result = agent("write a lot")
    assert result.stop_reason == "max_tokens"
    assert result.text == "part0 part1 part2 "
    assert result.usage.continuations == 2
    assert model.remaining == 1


def test_a_cut_tool_call_without_a_known_limit_goes_back_as_a_tool_error() -> None:
    model = ScriptedModel(
        [
            {
                "tool_calls": [{"name": "add", "arguments": '{"a": 1, "b"'}],
                "stop_reason": "max_tokens",
            },
            "sorry",
        ]
    )
    agent = Agent(model, tools=[add], store=None)
    result = agent("add")
    assert result.text == "sorry"
    errors = [r for m in agent.messages for r in m.tool_results]
    assert errors
    assert errors[0].is_error


def _openai(fault: Any, plan: str) -> OpenAIModel:
    return openai_at(fault, plan, tag="tr", retry=FAST, max_tokens=1000)


def _claude(fault: Any, plan: str) -> AnthropicModel:
    return claude_at(fault, plan, tag="tr", retry=FAST, max_tokens=1000)


def _bedrock(fault: Any, plan: str) -> BedrockModel:
    return bedrock_at(fault, plan, tag="tr", retry=FAST, max_tokens=1000)


def _limit(wire: str, body: dict[str, Any]) -> int:
    if wire == "bedrock":
        return int(body["inferenceConfig"]["maxTokens"])
    return int(body["max_tokens"])


MAKERS = [("openai", _openai), ("anthropic", _claude), ("bedrock", _bedrock)]


@pytest.mark.parametrize(("wire", "make"), MAKERS)
def test_length_stops_in_each_wire_format_are_continued(fault: Any, wire: str, make: Any) -> None:
    model = make(fault, "length,length,text")
    agent = Agent(model, store=None)
    result = agent("go")
    assert result.usage.continuations == 2
    assert result.text.startswith("cutcut")
    assert result.stop_reason == "end_turn"


@pytest.mark.parametrize(("wire", "make"), MAKERS)
def test_a_tool_call_cut_on_the_wire_is_retried_once_with_twice_the_limit(
    fault: Any, wire: str, make: Any
) -> None:
    model = make(fault, "cut_call,cut_call,text")
    agent = Agent(model, tools=[add], store=None)
    events = _events(agent, "add")
    truncated = [e for e in events if isinstance(e, ReplyTruncated)]
    assert [(e.action, e.max_tokens) for e in truncated] == [("retry", 2000)]
    bodies = [r["body"] for r in fault.app.state.recorder.for_model(model.model)]
    assert [_limit(wire, b) for b in bodies] == [1000, 2000, 1000]
    # the second cut is not retried again: the model gets a tool error and answers
    results = [r for m in agent.messages for r in m.tool_results]
    assert len(results) == 1
    assert results[0].is_error
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "end_turn"
