"""Shared state: function steps read it and return updates; reducers merge parallel
branches; a conflict is an error naming the key and branches; journaled as deltas."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tether import Agent, ConfigurationError, RunError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.workflows import Parallel, Sequential, StepContext, Update

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import echo


def note(text: str) -> Callable[[StepContext], Update]:
    def step(ctx: StepContext) -> Update:
        return Update(ctx.input, {"notes": [text], "last": text, "meta": {text: True}})

    step.__name__ = text
    return step


def test_reducers_merge_parallel_branches_updates() -> None:
    seen: list[Any] = []

    def after(ctx: StepContext) -> str:
        seen.append(ctx.state)
        return "done"

    wf = Sequential(
        Parallel(note("a"), note("b"), note("c")),
        after,
        state={"notes": ["start"]},
        reducers={"notes": "append", "last": "last", "meta": "merge"},
    )
    assert wf.run("go").text == "done"
    expected = {
        "notes": ["start", "a", "b", "c"],  # branches in step order, whatever finished first
        "last": "c",
        "meta": {"a": True, "b": True, "c": True},
    }
    assert seen == [expected]
    assert wf.state == expected


async def test_a_conflicting_update_without_a_reducer_names_the_key_and_branches(
    stores: Callable[[], Store],
) -> None:
    def after(ctx: StepContext) -> str:
        raise AssertionError("nothing runs after a conflict")

    store = stores()
    wf = Sequential(
        Parallel(note("a"), note("b")),
        after,
        reducers={"notes": "append"},
        store=store,
        session_id="conflict-1",
    )
    with pytest.raises(RunError, match=r"state key 'last' was updated by parallel branches a, b"):
        await wf.invoke_async("go")
    # nothing was lost: both branches' results, with their updates, are journaled
    entries = await stores().read_entries("conflict-1/parallel#1.1")
    saved = [
        json.loads(r["content"])
        for e in entries
        if e.kind == "message" and e.data["message"]["role"] == "tool"
        for r in e.data["message"]["content"]
    ]
    assert [u["update"]["last"] for u in saved] == ["a", "b"]


async def test_sequential_updates_replace_and_are_journaled_as_deltas(
    stores: Callable[[], Store],
) -> None:
    def grow(ctx: StepContext) -> dict[str, Any]:
        return {"log": ctx.state["log"] + "x" * 50, "n": ctx.state["n"] + 1}

    def build(store: Store) -> Sequential:
        return Sequential(
            grow,
            ("grow2", grow),
            ("grow3", grow),
            state={"log": "", "n": 0},
            store=store,
            session_id="state-1",
        )

    wf = build(stores())
    assert (await wf.invoke_async("go")).stop_reason == "end_turn"
    assert wf.state == {"log": "x" * 150, "n": 3}
    states = [e.data for e in await stores().read_entries("state-1") if e.kind == "state"]
    assert states[0] == {"state": {"log": "x" * 50, "n": 1}}
    # later, only what changed: the log's new end, the new count
    assert states[-1] == {"delta": {"extend": {"log": "x" * 50}, "set": {"n": 3}}}


class Plan(BaseModel):
    title: str = ""
    steps: list[str] = []


def test_a_typed_state_is_read_as_its_model_and_checked_after_each_update() -> None:
    seen: list[Any] = []

    def title(ctx: StepContext) -> dict[str, Any]:
        seen.append(ctx.state)
        return {"title": ctx.input.upper()}

    def check(ctx: StepContext) -> str:
        seen.append(ctx.state)
        return ctx.state.title

    wf = Sequential(title, check, state=Plan())
    assert wf.run("plan").text == "PLAN"
    assert seen == [Plan(), Plan(title="PLAN")]

    def bad(ctx: StepContext) -> dict[str, Any]:
        return {"steps": "not a list"}

    with pytest.raises(RunError, match=r"the state after workflow node bad does not fit Plan"):
        Sequential(bad, check, state=Plan()).run("plan")


def test_a_nested_workflow_reads_and_updates_the_outer_state() -> None:
    def read(ctx: StepContext) -> Update:
        return Update(f"saw {ctx.state['topic']}", {"notes": [f"inner saw {ctx.state['topic']}"]})

    def report(ctx: StepContext) -> str:
        return " / ".join(ctx.state["notes"])

    inner = Sequential(read, Agent(echo("agent"), name="agent"), name="inner")
    wf = Sequential(
        inner, report, state={"topic": "tides", "notes": ["outer"]}, reducers={"notes": "append"}
    )
    result = wf.run("go")
    assert result.text == "outer / inner saw tides"
    assert wf.state == {"topic": "tides", "notes": ["outer", "inner saw tides"]}


def test_a_model_calling_a_workflow_tool_cannot_set_its_state() -> None:
    def read(ctx: StepContext) -> str:
        return f"admin={ctx.state.get('admin', False)}"

    wf = Sequential(read, state={"admin": False})
    forged = json.dumps({"input": "x", "state": {"admin": True}})

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "flow", "args": {"task": forged}}]}

    agent = Agent(ScriptedModel(turn), tools=[wf.as_tool("flow")])
    assert agent.run("go").text == "admin=False"


def test_bad_state_arguments_are_configuration_errors() -> None:
    with pytest.raises(
        ConfigurationError, match=r"state= takes a dict or a pydantic model, got int"
    ):
        Sequential(lambda s: "x", state=3)
    with pytest.raises(ConfigurationError, match=r"reducers\['k'\]: use 'last', 'append', 'merge'"):
        Sequential(lambda s: "x", reducers={"k": "sum"})


def test_an_update_that_is_not_json_fails_the_node_naming_it() -> None:
    def bad(ctx: StepContext) -> dict[str, Any]:
        return {"when": object()}

    with pytest.raises(RunError, match=r"workflow node bad failed .*its state update is not JSON"):
        Sequential(bad).run("x")


async def test_the_state_survives_an_interrupt_resumed_in_a_new_process(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"

    class ConfirmWrites(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
            return Confirm("write?") if event.tool_call.name == "write" else None

    def build(store: Store) -> Sequential:
        @tool
        def write(text: str) -> str:
            """Write."""
            with effects.open("a") as f:
                f.write(text + "\n")
            return "ok"

        def turn(messages: list[Any], specs: list[Any]) -> Any:
            if messages[-1].role == "tool":
                return "written"
            return {"tool_calls": [{"id": "w", "name": "write", "args": {"text": "t"}}]}

        def first(ctx: StepContext) -> dict[str, Any]:
            return {"count": ctx.state["count"] + 1}

        def last(ctx: StepContext) -> str:
            return f"count={ctx.state['count']}"

        return Sequential(
            first,
            Agent(ScriptedModel(turn), tools=[write], name="w"),
            last,
            state={"count": 0},
            store=store,
            session_id="state-2",
            interventions=[ConfirmWrites()],
        )

    [pending] = (await build(stores()).invoke_async("go")).interrupts
    done = await build(stores()).resume_async({pending.id: "approve"})
    assert done.text == "count=1"  # the first step's update, read back from the journal
    assert effects.read_text() == "t\n"


def test_a_function_step_lent_to_another_agent_is_refused_naming_its_workflow() -> None:
    from tether import Agent
    from tether.models import ScriptedModel

    wf = Sequential(lambda ctx: "x", name="flow")
    lent = wf.agent.tools[0]

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c", "name": lent.name, "args": {"task": "t"}}]}

    other = Agent(ScriptedModel(turn), tools=[lent], name="other")
    assert "a step of workflow 'flow' ran outside it" in other.run("go").text


def test_a_nested_workflows_step_reads_the_outer_typed_state_as_its_model() -> None:
    seen: list[Any] = []

    def inner_step(ctx: StepContext) -> dict[str, Any]:
        seen.append(ctx.state)
        return {"steps": [*ctx.state.steps, "inner"]}

    wf = Sequential(Sequential(inner_step, name="inner"), state=Plan(title="t"))
    assert wf.run("go").stop_reason == "end_turn"
    assert seen == [Plan(title="t")]
    assert wf.state == {"title": "t", "steps": ["inner"]}
