"""Overflow recovery against the fault server in OpenAI, Anthropic and Bedrock wire formats."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from fault_models import bedrock_at, claude_at, openai_at

from tether import Agent, Execution
from tether.context import Summarizing, context_window
from tether.context.compaction import SUMMARY_MARK
from tether.errors import ContextOverflowError
from tether.messages import Message, ToolCall, ToolResult
from tether.models import RetryPolicy
from tether.models.scripted import ScriptedModel

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)


_openai = partial(openai_at, tag="ctx", retry=FAST)
_claude = partial(claude_at, tag="ctx", retry=FAST)
_bedrock = partial(bedrock_at, tag="ctx", retry=FAST)


def _history(turns: int) -> list[Message]:
    messages = [Message.user("start the job")]
    for n in range(turns):
        call = ToolCall(f"c{n}", "lookup", {"n": n})
        messages.append(Message("assistant", [call]))
        messages.append(
            Message("tool", [ToolResult(call.id, "lookup", f"record {n} " + "x" * 300)])
        )
    return messages


def _summariser() -> ScriptedModel:
    return ScriptedModel(lambda m, s: "what happened so far", name="wire-summariser")


def _sent_messages(fault: Any, model: Any) -> list[list[Any]]:
    bodies = [r["body"] for r in fault.app.state.recorder.for_model(model.model)]
    return [b["messages"] for b in bodies]


CASES = [
    ("openai", _openai, "ectx", 128_000),
    ("openai", _openai, "e413", None),
    ("anthropic", _claude, "ectx", 200_000),
    ("anthropic", _claude, "e413", None),
    ("anthropic", _claude, "elong", None),
    ("bedrock", _bedrock, "ectx", None),
]


@pytest.mark.parametrize(("wire", "make", "error", "stated"), CASES)
def test_an_overflow_is_compressed_and_retried(
    fault: Any, wire: str, make: Any, error: str, stated: int | None
) -> None:
    model = make(fault, f"{error},text")
    agent = Agent(model, store=None, execution=Execution(context=Summarizing(_summariser())))
    agent.messages = _history(12)
    result = agent("and now?")
    assert result.stop_reason == "end_turn"
    assert result.usage.compressions == 1
    first, second = _sent_messages(fault, model)
    assert len(second) < len(first)
    assert SUMMARY_MARK in str(second)
    assert "start the job" in str(second[0])
    assert "and now?" in str(second[-1])
    if stated is not None:
        assert context_window(model) == stated  # learned from the error text
    assert len(agent.messages) == 1 + 24 + 1 + 1  # the transcript keeps everything


def test_an_overflow_that_persists_ends_after_three_compressions(fault: Any) -> None:
    model = _openai(fault, "ectx")
    agent = Agent(model, store=None, execution=Execution(context=Summarizing(_summariser())))
    agent.messages = _history(40)
    with pytest.raises(ContextOverflowError) as info:
        agent("and now?")
    text = str(info.value)
    assert "after 3 compressions" in text or "nothing left to compress" in text
    assert info.value.result is not None
    assert info.value.result.usage.compressions <= 3
    assert len(_sent_messages(fault, model)) <= 4
    assert len(agent.messages) == 1 + 80 + 1  # nothing lost


@pytest.mark.parametrize(
    ("plan", "reason"), [("elong", "long_context_tier"), ("e413", "payload_too_large")]
)
def test_a_models_compress_hook_also_handles_the_other_too_long_refusals(
    fault: Any, plan: str, reason: str
) -> None:
    from tether.context import KeepAll
    from tether.events import ModelRetry
    from tether.models import AnthropicModel, ModelRequest

    seen: list[int] = []

    def compress(request: ModelRequest) -> ModelRequest:
        seen.append(len(request.messages))
        return ModelRequest(request.messages[-1:], request.tool_specs, request.system_prompt)

    model = AnthropicModel(
        f"{plan},text~hook", api_key="k", base_url=fault.url, retry=FAST, compress=compress
    )
    agent = Agent(model, store=None, execution=Execution(context=KeepAll()))  # only the hook
    agent.messages = _history(3)

    async def run() -> list[Any]:
        return [e async for e in agent.stream("and now?")]

    import asyncio

    events = asyncio.run(run())
    assert seen == [1 + 6 + 1]  # the refused request, once
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == [reason]
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "end_turn"
    assert len(_sent_messages(fault, model)[-1]) == 1  # the hook's shorter request was sent
