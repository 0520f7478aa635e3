"""Limits.exceeded: which limit stops a run first, and the explanation it gives."""

from __future__ import annotations

from typing import Any

import pytest

from tether import IterationBudget, Limits, RunUsage
from tether.control.events import AfterToolCall
from tether.limits import DEFAULT_MAX_TURNS


def usage(**counts: int) -> RunUsage:
    u = RunUsage()
    for name, value in counts.items():
        setattr(u, name, value)
    return u


def test_no_limit_reached() -> None:
    assert Limits().exceeded(usage(model_calls=100), 1e6) is None
    assert Limits(turns=3).exceeded(usage(model_calls=2), 0.0) is None


def test_each_limit_names_its_stop_reason_and_numbers() -> None:
    assert Limits(turns=2).exceeded(usage(model_calls=2), 0) == (
        "limit_turns",
        "reached the limit of 2 model call(s)",
    )
    assert Limits(total_tokens=10).exceeded(usage(input_tokens=6, output_tokens=5), 0) == (
        "limit_total_tokens",
        "used 11 tokens; the limit is 10",
    )
    assert Limits(output_tokens=4).exceeded(usage(output_tokens=4), 0) == (
        "limit_output_tokens",
        "used 4 output tokens; the limit is 4",
    )
    assert Limits(wall_seconds=1.5).exceeded(usage(), 2.04) == (
        "limit_wall_time",
        "ran 2.0 s; the limit is 1.5 s",
    )
    assert Limits(tool_calls=3).exceeded(usage(tool_calls=5), 0) == (
        "limit_tool_calls",
        "ran 5 tool call(s); the limit is 3",
    )


def test_the_first_limit_in_order_wins() -> None:
    both = Limits(turns=1, tool_calls=1)
    hit = both.exceeded(usage(model_calls=1, tool_calls=1), 0)
    assert hit is not None
    assert hit[0] == "limit_turns"


def test_a_turn_calling_only_cheap_tools_gives_its_iteration_back() -> None:
    from tether import Agent, tool
    from tether.models import ScriptedModel

    @tool(cheap=True, read_only=True)
    def peek() -> str:
        """Look (cheap)."""
        return "seen"

    @tool
    def act() -> str:
        """Act (not cheap)."""
        return "done"

    script = [
        {"tool_calls": [{"name": "peek", "args": {}}]},
        {"tool_calls": [{"name": "peek", "args": {}}, {"name": "act", "args": {}}]},
        "finished",
    ]
    budget = IterationBudget(10, refund_cheap=True)
    Agent(model=ScriptedModel(script), tools=[peek, act], budget=budget)("go")
    assert budget.remaining == 10 - 2  # the cheap-only turn was given back
    plain = IterationBudget(10)
    Agent(model=ScriptedModel(script), tools=[peek, act], budget=plain)("go")
    assert plain.remaining == 10 - 3


# -- the default cap of model calls ---------------------------------------------------


def _forever() -> Any:
    """A model that never stops calling a valid tool, and the tool it calls."""
    from tether import tool
    from tether.models import ScriptedModel

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    call = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 1}}]}
    return ScriptedModel(lambda messages, tools: call), add


def test_an_agent_with_no_limits_and_no_budget_stops_at_the_default_cap() -> None:
    from tether import Agent

    model, add = _forever()
    agent = Agent(model=model, tools=[add])
    assert agent.limits == Limits(turns=DEFAULT_MAX_TURNS)
    assert DEFAULT_MAX_TURNS == 90
    result = agent("go")
    assert result.stop_reason == "limit_turns"
    assert result.usage.model_calls == DEFAULT_MAX_TURNS
    assert result.reason == f"reached the limit of {DEFAULT_MAX_TURNS} model call(s)"
    assert agent.messages[-1].role == "tool"  # the last batch ran and was answered


def test_the_default_cap_is_overridden_by_limits_or_a_budget_and_none_disables_it() -> None:
    from tether import Agent

    model, add = _forever()
    own = Agent(model=model, tools=[add], limits=Limits(turns=95))
    assert own("go").usage.model_calls == 95
    budget = IterationBudget(100)
    budgeted = Agent(model=_forever()[0], tools=[add], budget=budget)
    assert budgeted.limits is None  # the budget is the cap
    assert budgeted("go").stop_reason == "budget_exhausted"
    assert budget.remaining == 0

    unbounded = Agent(model=_forever()[0], tools=[add], limits=None)
    assert unbounded.limits is None
    stopper = Agent(model=_forever()[0], tools=[add], limits=None)

    @stopper.on(AfterToolCall)
    def stop_after_120(event: AfterToolCall) -> None:
        if event.agent.conversation.run.usage.model_calls >= 120:
            event.agent.cancel()

    result = stopper("go")
    assert result.stop_reason == "cancelled"
    assert result.usage.model_calls == 120  # past the default: nothing capped it


def test_limits_must_be_a_limits_object() -> None:
    from tether import Agent
    from tether.errors import ConfigurationError
    from tether.models import ScriptedModel

    with pytest.raises(ConfigurationError, match=r"limits= takes a Limits\(...\) or None, got int"):
        Agent(model=ScriptedModel(["x"]), limits=90)  # type: ignore[arg-type]


def test_a_sub_agent_left_at_the_default_takes_its_parents_limits() -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    model, add = _forever()
    child = Agent(model=model, tools=[add])  # the default cap, nothing set
    call = {"id": "k1", "name": "helper", "args": {"task": "dig"}}

    def parent_turn(messages: list[Any], specs: list[Any]) -> Any:
        return "done" if messages[-1].role == "tool" else {"tool_calls": [call]}

    parent = Agent(
        model=ScriptedModel(parent_turn), tools=[child.as_tool("helper")], limits=Limits(turns=7)
    )
    result = parent("go")
    assert result.usage.by_agent["helper#k1"].model_calls == 7  # the parent's, not 90
    # inherited for the call only: the child Agent keeps exactly its own configuration
    assert child.limits is not None
    assert child.limits.turns != 7
