"""Policy at every node: the workflow's interventions, confirm, limits, budget and cancel."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

from tether import Agent, IterationBudget, Limits, tool
from tether.control import BeforeToolCall, Deny, InterventionHandler
from tether.models import ScriptedModel
from tether.workflows import Loop, Parallel, Sequential, StepContext

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import ConfirmWrites, echo, effects_of, writer


def _writer_agent(name: str, effects: Path, **kwargs: Any) -> Agent:
    @tool
    def write(text: str) -> str:
        """Write text."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{text}\n")
        return f"ok {text}"

    return Agent(writer(name), tools=[write], name=name, **kwargs)


class DenyWrites(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        return Deny("no writes here") if event.tool_call.name == "write" else None


def test_a_workflow_policy_denies_a_tool_in_a_node_at_any_depth(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    wf = Sequential(
        Parallel(_writer_agent("deep", effects)), interventions=[DenyWrites()], name="guarded"
    )
    result = wf.run("go")
    assert result.stop_reason == "end_turn"
    assert "no writes here" in result.text
    assert effects_of(effects) == []  # putting the step in a workflow does not escape policy


def test_a_nodes_own_policy_adds_to_the_workflows(tmp_path: Path) -> None:
    seen: list[str] = []

    class Record(InterventionHandler):
        def __init__(self, who: str) -> None:
            self.who = who

        def before_tool_call(self, event: BeforeToolCall) -> None:
            seen.append(f"{self.who}:{event.agent.path}")

    effects = tmp_path / "effects"
    node = _writer_agent("w", effects, interventions=[Record("node")])
    wf = Sequential(node, interventions=[Record("workflow")])
    assert wf.run("go").stop_reason == "end_turn"
    # the node's own first, then the workflow's; both in the node (and the workflow's own
    # call of the node, at the top)
    assert seen == ["workflow:", "node:w#1", "workflow:w#1"]
    assert effects_of(effects) == ["w"]


def test_the_workflows_confirm_callback_answers_a_nodes_confirm(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    asked: list[str] = []

    def confirm(request: Any) -> bool:
        asked.append(request.prompt)
        return True

    wf = Sequential(_writer_agent("a", effects), interventions=[ConfirmWrites()], confirm=confirm)
    result = wf.run("go")
    assert result.stop_reason == "end_turn"
    assert asked == ["write 'a'?"]
    assert effects_of(effects) == ["a"]


def test_limits_count_across_the_whole_workflow() -> None:
    ran: list[str] = []

    def agent(name: str) -> Agent:
        def turn(messages: list[Any], specs: list[Any]) -> Any:
            ran.append(name)
            return f"{name}: " + "word " * 200

        return Agent(ScriptedModel(turn), name=name)

    wf = Sequential(agent("a"), agent("b"), agent("c"), limits=Limits(total_tokens=150))
    result = wf.run("go")
    assert result.stop_reason == "limit_total_tokens"
    assert ran == ["a"]  # a's tokens count against the workflow: b and c never start


def test_an_iteration_budget_is_shared_by_every_node_and_the_workflows_steps_are_free() -> None:
    calls: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> str:
        calls.append("x")
        return "again"

    wf = Loop(
        Agent(ScriptedModel(turn), name="x"),
        until=lambda out: False,
        max_rounds=10,
        budget=IterationBudget(4),
    )
    result = wf.run("go")
    assert result.stop_reason == "budget_exhausted"
    assert (
        result.reason == "the iteration budget is used up; workflow:loop stops before its next node"
    )
    assert len(calls) == 4  # four units, four node model calls: deciding the next node is free
    assert result.usage.model_calls == 4


def test_a_node_stopped_by_the_budget_stops_the_workflow_with_that_reason() -> None:
    def turn(messages: list[Any], specs: list[Any]) -> str:
        return "done"

    wf = Sequential(
        Parallel(Agent(ScriptedModel(turn), name="x"), name="inner"),
        lambda step: "never",
        budget=IterationBudget(1),
    )
    result = wf.run("go")
    assert result.stop_reason == "budget_exhausted"
    assert result.reason is not None
    assert result.reason.startswith("workflow node inner: ")
    assert "sub-agent inner#1 stopped with budget_exhausted" in result.reason


def test_turn_limits_count_the_nodes_model_calls() -> None:
    calls: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> str:
        calls.append("x")
        return "again"

    wf = Loop(
        Agent(ScriptedModel(turn), name="x"),
        until=lambda out: False,
        max_rounds=10,
        limits=Limits(turns=3),
    )
    result = wf.run("go")
    assert result.stop_reason == "limit_turns"
    assert len(calls) == 3


def test_cancel_reaches_every_running_node() -> None:
    started = threading.Event()
    waiting = threading.Event()
    outcome: list[str] = []

    async def slow(step: StepContext) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "slept"

    @tool
    async def wait_long() -> str:
        """Wait."""
        waiting.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("tool cancelled")
            raise
        return "waited"

    waiter = Agent(
        ScriptedModel(lambda m, s: {"tool_calls": [{"name": "wait_long", "args": {}}]}),
        tools=[wait_long],
        name="waiter",
    )
    wf = Sequential(Parallel(slow, waiter), echo_agent())
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(wf.run("go")))
    runner.start()
    assert started.wait(10)
    assert waiting.wait(10)
    wf.cancel()
    runner.join(10)
    assert not runner.is_alive()
    assert results[0].stop_reason == "cancelled"
    assert sorted(outcome) == ["cancelled", "tool cancelled"]


def echo_agent() -> Agent:
    return Agent(echo("after"), name="after")
