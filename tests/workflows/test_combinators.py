"""Sequential, Parallel and Loop: steps, outputs, nesting, streaming, usage, errors."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError, RunError
from tether.events import FinalResult, SubAgentEvent, TextDelta
from tether.models import ScriptedModel
from tether.workflows import Loop, Parallel, Sequential, StepContext, Update

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import echo


def test_sequential_hands_each_output_to_the_next_step() -> None:
    async def shout(step: StepContext) -> str:
        return step.input.upper()

    wf = Sequential(Agent(echo("a"), name="a"), shout, Agent(echo("b"), name="b"))
    result = wf.run("go")
    assert result.stop_reason == "end_turn"
    assert result.text == "b: A: GO"
    assert wf.node_names == ["a", "shout", "b"]
    assert set(result.usage.by_agent) == {"a#1", "b#3"}
    assert result.usage.by_agent["a#1"].model_calls == 1


def test_function_steps_read_the_state_and_return_updates() -> None:
    def count(step: StepContext) -> Update:
        return Update(f"{step.input}+", {"n": step.state.get("n", 0) + 1})

    def note(step: StepContext) -> dict[str, Any]:
        return {"seen": step.input}  # a mapping: state updates, the input passes on

    wf = Sequential(count, ("again", count), note, state={"n": 10})
    result = wf.run("x")
    assert result.text == "x++"
    assert wf.state == {"n": 12, "seen": "x++"}


def test_parallel_runs_its_steps_at_once_and_joins_in_step_order() -> None:
    arrived: list[str] = []
    both = asyncio.Event()

    def waiter(name: str) -> Any:
        async def step(ctx: StepContext) -> str:
            arrived.append(name)
            if len(arrived) == 2:
                both.set()
            await asyncio.wait_for(both.wait(), 5)  # only returns when the other runs too
            return f"{name}({ctx.input})"

        step.__name__ = name
        return step

    wf = Parallel(waiter("slow"), waiter("fast"), join=" | ".join)
    assert wf.run("t").text == "slow(t) | fast(t)"
    assert Parallel(waiter("p"), waiter("q")).run("u").text == '["p(u)", "q(u)"]'


def test_loop_runs_until_its_test_holds_and_never_past_max_rounds() -> None:
    def grow(step: StepContext) -> str:
        return step.input + "a"

    until = Loop(grow, until=lambda out: len(out) >= 3, max_rounds=10)
    assert until.run("").text == "aaa"
    bounded = Loop(grow, until=lambda out: False, max_rounds=4)
    result = bounded.run("")
    assert result.text == "aaaa"
    assert [m.tool_calls[0].id for m in bounded.agent.messages if m.tool_calls] == [
        "1",
        "2",
        "3",
        "4",
    ]


def test_a_workflow_is_a_step_of_another_and_a_tool_of_an_agent() -> None:
    inner = Sequential(Agent(echo("x"), name="x"), Agent(echo("y"), name="y"), name="inner")
    outer = Sequential(inner, Agent(echo("z"), name="z"))
    result = outer.run("go")
    assert result.text == "z: y: x: go"
    assert {"inner#1", "inner#1/x#1", "inner#1/y#2", "z#2"} <= set(result.usage.by_agent)

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "agent: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "pipeline", "args": {"task": "job"}}]}

    agent = Agent(ScriptedModel(turn), tools=[inner.as_tool("pipeline", "Runs x then y")])
    assert agent.run("go").text == "agent: y: x: job"


async def test_stream_attributes_each_node_event_to_its_path() -> None:
    wf = Sequential(Parallel(Agent(echo("a"), name="a"), Agent(echo("b"), name="b")))
    paths: set[str] = set()
    final = None
    async for event in wf.stream("go"):
        if isinstance(event, SubAgentEvent) and isinstance(event.event, TextDelta):
            paths.add(event.path)
        if isinstance(event, FinalResult):
            final = event.result
    # each agent's text under its path; the nested workflow's own answer (the join) under its
    assert paths == {"parallel#1/a#1", "parallel#1/b#2", "parallel#1"}
    assert final is not None
    assert final.text == '["a: go", "b: go"]'


def test_a_failing_step_fails_the_workflow_naming_the_node() -> None:
    def boom(step: StepContext) -> str:
        raise ValueError("no input today")

    def after(step: StepContext) -> str:
        raise AssertionError("a step after a failed one must not run")

    wf = Sequential(boom, after)
    with pytest.raises(RunError, match=r"workflow node boom failed .*no input today"):
        wf.run("x")


def test_bad_combinators_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"max_rounds=\.\.\.\) takes an int >= 1, got 0"):
        Loop(lambda s: "x", max_rounds=0)
    with pytest.raises(ConfigurationError, match="Sequential needs at least one step"):
        Sequential()
    with pytest.raises(ConfigurationError, match="a step is an Agent, a workflow or a function"):
        Sequential(42)
    with pytest.raises(ConfigurationError, match="got lease"):
        Sequential(lambda s: "x", lease=3)
    with pytest.raises(ConfigurationError, match=r"join=\.\.\.\) takes a function"):
        Parallel(lambda s: "x", join="comma")  # type: ignore[arg-type]


def test_duplicate_step_names_are_made_unique() -> None:
    a = Agent(echo("a"), name="a")
    wf = Sequential(a, a, ("my step!", a))
    assert wf.node_names == ["a", "a_2", "my_step"]
    assert wf.run("go").text == "a: a: a: go"


def test_the_workflows_own_conversation_is_never_compressed() -> None:
    def big(step: StepContext) -> str:
        return step.input + "x" * 100_000  # eight rounds: far past any context window

    wf = Loop(big, max_rounds=8)
    result = wf.run("go")
    assert result.stop_reason == "end_turn"
    assert result.usage.compressions == 0
    assert len(result.text) == 2 + 8 * 100_000  # every round's output was read back


def test_an_agent_step_with_a_store_of_its_own_is_refused_when_the_workflow_is_built(
    tmp_path: Path,
) -> None:
    from tether.durable import SQLiteStore

    own = Agent(echo("a"), name="a", store=SQLiteStore(tmp_path / "own.db"), session_id="x")
    with pytest.raises(ConfigurationError, match="sub-agent 'a' was built with a store"):
        Sequential(own)


def test_one_agent_object_serves_parallel_branches_without_changing_it() -> None:
    a = Agent(echo("a"), name="a")
    wf = Parallel(a, ("again", a))
    assert wf.run("go").text == '["a: go", "a: go"]'
    assert a.messages == []  # each run had a child conversation of its own
