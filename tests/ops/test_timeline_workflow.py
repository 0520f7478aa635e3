"""A workflow's session in the timeline: its journaled marker, node rows (name, kind,
status, duration, step / round / superstep) with each node's own steps nested under it
at any depth, no model-call rows for the conductor, a pending interrupt deep in a branch
on its node rows with its address, and ``tether sessions timeline`` printing it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from workflow_agents import echo, review_workflow

from tether import Agent, RunError
from tether.durable import SQLiteStore, Store
from tether.ops.cli import app
from tether.ops.timeline import read_timeline, timeline_of
from tether.workflows import Graph, Loop, Sequential, StepContext

ENV: dict[str, str | None] = {"COLUMNS": "240", "NO_COLOR": "1", "TETHER_STORE": None}
ADDRESS = "review#2/legal#1/confirm:ConfirmWrites"


async def timeline(store: Store, session_id: str) -> dict[str, Any]:
    data = await read_timeline(store, session_id)
    assert data is not None
    return timeline_of(data)


def nodes(shown: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Node rows by their path in the tree (the last row of a node run resumed)."""
    return {s["detail"]["path"]: s for s in shown["steps"] if s["kind"] == "node"}


async def test_a_workflow_session_journals_what_it_is_and_its_nodes_kinds(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    store = stores()
    await review_workflow(store, tmp_path / "effects", confirm=False).invoke_async("the plan")
    marks = [
        e.data["workflow"]
        for e in await store.read_entries("wf-1", 0)
        if e.kind == "audit" and "workflow" in e.data
    ]
    assert marks == [
        {
            "name": "pipeline",
            "kind": "sequential",
            "nodes": {"draft": "function", "review": "workflow", "summary": "agent"},
        }
    ]
    [inner] = [
        e.data["workflow"]
        for e in await store.read_entries("wf-1/review#3.2", 0)
        if e.kind == "audit" and "workflow" in e.data
    ]
    assert inner == {
        "name": "parallel",
        "kind": "parallel",
        "nodes": {"legal": "agent", "tech": "agent"},
    }


async def test_nodes_are_nested_rows_with_their_own_steps_under_them_and_no_conductor_calls(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    store = stores()
    result = await review_workflow(store, tmp_path / "effects", confirm=False).invoke_async("x")
    assert result.stop_reason == "end_turn"
    shown = await timeline(store, "wf-1")
    assert shown["workflow"] == {"name": "pipeline", "kind": "sequential"}
    steps = shown["steps"]
    found = nodes(shown)
    assert set(found) == {"draft#1", "review#2", "summary#3", "review#2/legal#1", "review#2/tech#2"}
    for path, kind, step, depth in [
        ("draft#1", "function", 1, 0),
        ("review#2", "workflow", 2, 0),
        ("summary#3", "agent", 3, 0),
        ("review#2/legal#1", "agent", 1, 1),
        ("review#2/tech#2", "agent", 1, 1),
    ]:
        row = found[path]
        assert (row["detail"]["node_kind"], row["detail"]["step"], row["depth"]) == (
            kind,
            step,
            depth,
        )
        assert row["status"] == "ok"
        assert row["duration"] >= 0
        assert row["title"] == f"{row['detail']['node']} ({kind}, step {step})"
    # a branch sits under its workflow's node, its own steps under it
    assert steps[found["review#2/legal#1"]["parent"]] is not None
    assert steps[found["review#2/legal#1"]["parent"]]["detail"]["path"] == "review#2"
    legal = found["review#2/legal#1"]["index"]
    own = [s for s in steps if s["parent"] == legal]
    assert [s["kind"] for s in own][:3] == ["run", "input", "model"]
    assert {s["kind"] for s in own} >= {"model", "tool", "end"}  # its write, its answer
    # the conductors (the pipeline's and the Parallel's) made no model-call rows
    workflow_sessions = {"wf-1", "wf-1/review#3.2"}
    assert [s for s in steps if s["kind"] == "model" and s["session_id"] in workflow_sessions] == []
    answers = [s for s in steps if s["kind"] == "answer"]
    assert [s["session_id"] for s in answers] == ["wf-1/review#3.2", "wf-1"]
    assert answers[-1]["detail"]["text"] == result.text
    # token usage: the node agents' model calls only (legal two, tech one, summary one)
    assert len(shown["usage"]["calls"]) == 4 == result.usage.model_calls
    assert found["review#2"]["detail"]["child_session"]["workflow"] == {
        "name": "parallel",
        "kind": "parallel",
    }


async def test_a_pending_interrupt_deep_in_a_branch_is_on_its_node_rows_with_its_address(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await review_workflow(stores(), effects).invoke_async("the plan")
    [pending] = first.interrupts
    assert pending.name == ADDRESS
    shown = await timeline(stores(), "wf-1")
    found = nodes(shown)
    for path in ("review#2", "review#2/legal#1"):  # the branch and the workflow holding it
        row = found[path]
        assert row["status"] == "waiting"
        [asked] = row["detail"]["interrupts"]
        assert asked["address"] == ADDRESS
        assert asked["status"] == "waiting"
        assert row["duration"] > 0  # it ran until it asked
    assert found["review#2/tech#2"]["status"] == "ok"  # the other branch ran to its end
    assert found["review#2/tech#2"]["detail"]["interrupts"] == []
    assert [i["interrupt_id"] for i in found["review#2"]["detail"]["interrupts"]] == [pending.id]
    await review_workflow(stores(), effects).resume_async({pending.id: "approve"})
    found = nodes(await timeline(stores(), "wf-1"))
    assert found["review#2"]["status"] == "ok"
    assert [i["status"] for i in found["review#2/legal#1"]["detail"]["interrupts"]] == ["answered"]
    assert "summary#3" in found


async def test_loop_rounds_and_graph_supersteps_on_the_node_rows(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    loop = Loop(Agent(echo("w"), name="w"), max_rounds=3, store=store, session_id="loop-1")
    await loop.invoke_async("x")
    rows = nodes(await timeline(store, "loop-1"))
    assert [(r["title"], r["detail"]["step_name"]) for r in rows.values()] == [
        ("w (agent, round 1)", "round"),
        ("w (agent, round 2)", "round"),
        ("w (agent, round 3)", "round"),
    ]
    graph = Graph(store=store, session_id="graph-1")
    for name in ("plan", "a", "b", "join"):
        graph.add_node(name, Agent(echo(name), name=name))
    graph.add_edge("plan", "a").add_edge("plan", "b").add_edge("a", "join").add_edge("b", "join")
    await graph.set_entry("plan").invoke_async("go")
    rows = nodes(await timeline(store, "graph-1"))
    assert {r["detail"]["node"]: r["detail"]["step"] for r in rows.values()} == {
        "plan": 1,
        "a": 2,
        "b": 2,
        "join": 3,
    }
    assert {r["detail"]["step_name"] for r in rows.values()} == {"superstep"}
    await store.close()


def cli(*args: str) -> Any:
    result = CliRunner(env=ENV).invoke(app, ["sessions", "timeline", *args])
    assert "Traceback" not in result.output
    assert result.exit_code == 0, result.output
    return result


def test_tether_sessions_timeline_prints_the_nodes_nested_and_json_carries_them(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.db"
    assert review_workflow(SQLiteStore(db), tmp_path / "effects").run("the plan").interrupts
    text = cli("wf-1", "--store", str(db)).output
    assert "review (workflow, step 2)" in text
    assert "  ↳ legal (agent, step 1)" in text  # one level down, under review
    assert "    ↳ model call → write" in text  # legal's own step, two levels down
    assert (
        f"workflow node review#2; session wf-1/review#3.2 (suspended); waiting: {ADDRESS}" in text
    )
    assert "model call → draft" not in text  # the conductor's decisions are not model calls
    shown = json.loads(cli("wf-1", "--store", str(db), "--json").output)
    found = nodes(shown)
    legal = found["review#2/legal#1"]
    assert shown["steps"][legal["parent"]]["detail"]["path"] == "review#2"
    assert legal["detail"]["interrupts"][0]["address"] == ADDRESS


def test_a_node_task_quoting_a_masked_secret_is_masked_in_the_timeline(
    tmp_path: Path,
) -> None:
    """A workflow hands one node's answer to the next: what a mask hid in the first node's
    call is hidden in the next node's arguments and in the failure, page and terminal."""
    from secret_tree import SECRET, login

    from tether.models import ScriptedModel

    def leaf(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done: " + messages[-1].tool_results[0].content
        args = {"user": "alice", "password": SECRET}
        return {"tool_calls": [{"id": "l1", "name": "login", "args": args}]}

    def check(step: StepContext) -> str:
        raise RuntimeError(f"cannot check {step.input}")

    db = tmp_path / "t.db"
    ops = Agent(ScriptedModel(leaf), tools=[login], name="ops")
    wf = Sequential(ops, check, name="flow", store=SQLiteStore(db), session_id="sec-1")
    with pytest.raises(RunError):
        wf.run("go")
    out = cli("sec-1", "--store", str(db), "--json").output
    assert SECRET not in out
    found = nodes(json.loads(out))
    assert found["check#2"]["status"] == "error"
    assert "logged in with ***" in found["check#2"]["detail"]["arguments"]["task"]
    assert SECRET not in cli("sec-1", "--store", str(db)).output


async def test_a_swarms_handoff_is_two_agent_node_rows_the_approval_on_the_second(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    from swarm_agents import support_swarm

    store = stores()
    swarm = support_swarm(store, tmp_path / "effects")
    first = await swarm.invoke_async("refund my order")
    [pending] = first.interrupts
    shown = await timeline(stores(), swarm.session_id)
    assert shown["workflow"]["kind"] == "swarm"
    found = nodes(shown)
    assert [(p, r["detail"]["node_kind"], r["detail"]["step"]) for p, r in found.items()] == [
        ("triage#1", "agent", 1),
        ("billing#2", "agent", 2),
    ]
    assert found["triage#1"]["status"] == "ok"  # it handed off
    assert found["billing#2"]["status"] == "waiting"
    [asked] = found["billing#2"]["detail"]["interrupts"]
    assert asked["address"] == pending.name == "billing#2/confirm:ConfirmRefunds"


def test_the_timeline_reads_the_marker_the_workflows_write() -> None:
    from tether.ops import timeline_nodes
    from tether.workflows import observing

    assert timeline_nodes.MARKER == observing.MARKER
    assert timeline_nodes.STEP_NAMES == observing.STEP_NAMES


def test_a_branch_killed_in_a_write_shows_one_cut_off_per_dead_run_and_the_doubt_on_its_nodes(
    tmp_path: Path,
) -> None:
    """The recovery's in-doubt interrupt, lifted into the workflows above, is not a
    recovery of theirs: their live runs are not cut off; the doubt is on the node rows."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys
    import time

    import workflow_agents
    from workflow_agents import effects_of

    db, effects = str(tmp_path / "t.db"), tmp_path / "effects"
    env = {**os.environ, "TETHER_WF_CRASH": "1", "TETHER_WF_HANG": "legal"}
    script = [sys.executable, workflow_agents.__file__, db, str(effects), "start"]
    proc = subprocess.Popen(script, env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while "legal" not in effects_of(effects):
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    time.sleep(1.2)  # the dead process's 1 s leases expire
    recovered = workflow_agents.step(db, effects, "resume", "{}", crash=True)
    [doubt] = recovered["interrupts"]
    assert doubt["point"] == "review#2/legal#1/in_doubt"

    async def read() -> dict[str, Any]:
        store = SQLiteStore(db)
        try:
            return await timeline(store, "wf-1")
        finally:
            await store.close()

    shown = asyncio.run(read())
    cut = [
        s["session_id"] for s in shown["steps"] if s["title"] == "run cut off (its process died)"
    ]
    assert sorted(cut) == ["wf-1", "wf-1/review#3.2", "wf-1/review#3.2/legal#1.1"]  # the dead runs
    found = nodes(shown)
    for path in ("review#2", "review#2/legal#1"):
        assert found[path]["status"] == "waiting"
        [asked] = found[path]["detail"]["interrupts"]
        assert (asked["address"], asked["status"]) == ("review#2/legal#1/in_doubt", "in_doubt")
    answers = json.dumps({doubt["id"]: {"skip": "ok legal (done before the crash)"}})
    assert workflow_agents.step(db, effects, "resume", answers, crash=True)["stop_reason"] == (
        "end_turn"
    )
    found = nodes(asyncio.run(read()))
    assert found["review#2"]["status"] == "ok"
    assert [i["status"] for i in found["review#2/legal#1"]["detail"]["interrupts"]] == ["settled"]


async def test_a_workflow_called_as_an_agents_tool_nests_its_nodes_under_that_call(
    tmp_path: Path,
) -> None:
    from tether.models import ScriptedModel

    store = SQLiteStore(tmp_path / "t.db")
    flow = Sequential(Agent(echo("a"), name="a"), Agent(echo("b"), name="b"), name="flow")

    def lead_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "lead: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "flow", "args": {"task": "go"}}]}

    lead = Agent(
        ScriptedModel(lead_turn), tools=[flow.as_tool("flow")], store=store, session_id="lead-1"
    )
    assert (await lead.invoke_async("start")).text == "lead: b: a: go"
    shown = await timeline(store, "lead-1")
    steps = shown["steps"]
    assert shown["workflow"] is None  # the lead is an agent: its model call is one
    [call] = [s for s in steps if s["kind"] == "tool" and s["title"] == "flow"]
    assert call["detail"]["child_session"]["workflow"] == {"name": "flow", "kind": "sequential"}
    found = nodes(shown)
    assert set(found) == {"flow#c1/a#1", "flow#c1/b#2"}  # paths from the top of the tree
    assert {steps[r["parent"]]["index"] for r in found.values()} == {call["index"]}
    assert [s["session_id"] for s in steps if s["kind"] == "model"] == [
        "lead-1",
        "lead-1/flow#1.c1/a#1.1",
        "lead-1/flow#1.c1/b#3.2",
        "lead-1",
    ]
    await store.close()
