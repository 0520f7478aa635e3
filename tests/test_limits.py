"""Limits.exceeded: which limit stops a run first, and the explanation it gives."""

from __future__ import annotations

from tether import IterationBudget, Limits, RunUsage


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
