"""RunUsage sums what each model call reported, a sub-agent tree's included."""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.models import ScriptedModel


@tool
def look(q: str) -> str:
    """Look something up."""
    return f"found {q}"


def _turns(*reasoning: int) -> list[Any]:
    usages = [
        {"input_tokens": 100, "output_tokens": 50 + r, "reasoning_tokens": r} for r in reasoning
    ]
    turns: list[Any] = [
        {"tool_calls": [{"name": "look", "args": {"q": str(i)}}], "usage": u}
        for i, u in enumerate(usages[:-1])
    ]
    return [*turns, {"text": "done", "usage": usages[-1]}]


def test_reasoning_tokens_are_summed_per_run_and_per_agent() -> None:
    child = Agent(model=ScriptedModel(_turns(7, 11)), tools=[look])
    call = {"id": "k1", "name": "helper", "args": {"task": "dig"}}
    parent = ScriptedModel(
        [
            {"tool_calls": [call], "usage": {"output_tokens": 23, "reasoning_tokens": 20}},
            {"text": "ok", "usage": {"output_tokens": 5, "reasoning_tokens": 3}},
        ]
    )
    result = Agent(model=parent, tools=[child.as_tool("helper")])("go")
    assert result.usage.by_agent["helper#k1"].reasoning_tokens == 18
    assert result.usage.reasoning_tokens == 18 + 23
    assert result.usage.to_dict()["reasoning_tokens"] == 41


def test_a_run_without_reasoning_tokens_journals_no_such_key() -> None:
    result = Agent(model=ScriptedModel(["plain"]))("go")
    assert result.usage.reasoning_tokens == 0
    assert "reasoning_tokens" not in result.usage.to_dict()
