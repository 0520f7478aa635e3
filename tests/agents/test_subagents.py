"""Sub-agents as tools: child sessions, shared budget, usage roll-up, nested interrupts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError, IterationBudget, ToolContext, tool
from tether.agents import address, as_tool, child_session_id
from tether.control import (
    AfterInvocation,
    BeforeModelCall,
    BeforeToolCall,
    Deny,
    InterventionHandler,
)
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.session_ids import validate_session_id

SUPPORT = Path(__file__).parents[1] / "support"
sys.path.insert(0, str(SUPPORT))

import agent_tree  # noqa: E402


def delegating(tool_name: str, task: str = "look it up") -> Any:
    """A parent script: delegate once, then answer with the tool's result."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        tools = [m for m in messages if m.role == "tool"]
        if tools:  # (a grace message may follow the tool results)
            return "parent: " + tools[-1].tool_results[0].content
        return {"tool_calls": [{"id": "d1", "name": tool_name, "args": {"task": task}}]}

    return turn


def test_an_agent_as_a_tool_answers_with_its_final_text_and_rolls_up_usage() -> None:
    child = Agent(model=ScriptedModel(lambda m, s: f"child read: {m[0].text}"))
    sessions: list[str] = []

    @child.on(BeforeModelCall)
    def where(event: BeforeModelCall) -> None:
        sessions.append(event.agent.session_id)

    own_session = child.session_id
    parent = Agent(
        model=ScriptedModel(delegating("researcher")),
        tools=[child.as_tool("researcher", "Researches a question")],
    )
    result = parent("go")
    assert result.text == "parent: child read: look it up"
    spec = parent.tool_map["researcher"].spec()
    assert spec["input_schema"]["required"] == ["task"]
    assert spec["description"] == "Researches a question"
    child_usage = result.usage.by_agent["researcher#d1"]
    assert child_usage.model_calls == 1
    assert result.usage.model_calls == 3  # two of the parent's, one of the child's
    # the call ran in a child session of the parent's; the child Agent kept its own
    assert sessions == [child_session_id(parent.session_id, "researcher", 1, "d1")]
    assert validate_session_id(sessions[0]).startswith(parent.session_id + "/")
    assert child.session_id == own_session
    assert child.messages == []


def test_a_factory_gives_each_call_a_fresh_child_and_parallel_calls_overlap() -> None:
    built: list[Agent] = []
    ran: dict[str, int] = {}  # session id -> messages when the call ended

    def researcher() -> Agent:
        agent = Agent(model=ScriptedModel(lambda m, s: f"on {m[0].text}"))

        @agent.on(AfterInvocation)
        def ended(event: AfterInvocation) -> None:
            ran[event.agent.session_id] = len(event.agent.messages)

        built.append(agent)
        return agent

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return " | ".join(r.content for r in messages[-1].tool_results)
        calls = [{"id": f"c{i}", "name": "r", "args": {"task": t}} for i, t in enumerate("xy")]
        return {"tool_calls": calls}

    parent = Agent(model=ScriptedModel(turn), tools=[as_tool(researcher, name="r", parallel=True)])
    assert parent("go").text == "on x | on y"
    assert len(built) == 2
    assert len(ran) == 2  # two child sessions
    assert all(n == 2 for n in ran.values())  # each child kept only its own call


def test_a_long_or_odd_call_id_still_gives_a_valid_child_session_id() -> None:
    sid = child_session_id("p" * 250, "researcher", 3, "call\x00id")
    assert validate_session_id(sid).startswith("sub_")
    assert sid == child_session_id("p" * 250, "researcher", 3, "call\x00id")


def test_a_child_with_its_own_store_is_refused_with_the_fix(tmp_path: Path) -> None:
    child = Agent(model=ScriptedModel(["x"]), store=SQLiteStore(str(tmp_path / "c.db")))
    with pytest.raises(ConfigurationError, match="build it with store=None"):
        child.as_tool("researcher")
    with pytest.raises(ConfigurationError, match="parallel=True needs an agent factory"):
        as_tool(Agent(model=ScriptedModel(["x"])), name="r", parallel=True)


def test_children_draw_on_the_parents_budget_and_get_no_grace_call() -> None:
    looping = {"tool_calls": [{"name": "noop", "args": {}}]}

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    child = Agent(model=ScriptedModel(lambda m, s: looping), tools=[noop])
    budget = IterationBudget(4)
    parent = Agent(
        model=ScriptedModel(delegating("worker")),
        tools=[child.as_tool("worker")],
        budget=budget,
    )
    result = parent("go")
    # parent call 1, child calls 2..4 (budget spent: the child stops, no grace turn),
    # then the parent's own grace call answers.
    assert "stopped with budget_exhausted" in result.text
    assert result.stop_reason == "end_turn"
    assert result.usage.by_agent["worker#d1"].model_calls == 3
    assert budget.remaining == 0


def test_a_child_with_its_own_cap_stops_at_it_and_the_parent_budget_counts_it() -> None:
    looping = {"tool_calls": [{"name": "noop", "args": {}}]}

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    child = Agent(
        model=ScriptedModel(lambda m, s: looping), tools=[noop], budget=IterationBudget(2)
    )
    budget = IterationBudget(10)
    parent = Agent(
        model=ScriptedModel(delegating("worker")), tools=[child.as_tool("worker")], budget=budget
    )
    result = parent("go")
    assert result.usage.by_agent["worker#d1"].model_calls == 2
    assert budget.remaining == 10 - 2 - 2  # two parent calls, two child calls


class DenyRm(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
        return Deny("rm is not allowed") if event.tool_call.name == "rm" else None


def test_delegating_a_denied_call_to_a_child_is_still_denied() -> None:
    removed: list[str] = []

    @tool
    def rm(path: str) -> str:
        """Remove a file."""
        removed.append(path)
        return "removed"

    def child_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "child saw: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"name": "rm", "args": {"path": "/etc"}}]}

    # The child has the tool and no policy of its own: the parent's Deny still applies.
    child = Agent(model=ScriptedModel(child_turn), tools=[rm])
    parent = Agent(
        model=ScriptedModel(delegating("helper", "remove /etc")),
        tools=[rm, child.as_tool("helper")],
        interventions=[DenyRm()],
    )
    result = parent("go")
    assert removed == []
    assert "Denied: denied by policy 'DenyRm': rm is not allowed" in result.text
    # the parent's policy ran in the call; the child Agent itself is unchanged
    assert child.interventions == ()


def test_a_nested_confirm_suspends_the_tree_and_resume_continues_the_child(
    tmp_path: Path,
) -> None:
    effects = tmp_path / "effects.txt"
    top = agent_tree.build(None, effects)
    first = top("plan")
    assert first.stop_reason == "interrupt"
    names = sorted(i.name for i in first.interrupts)
    assert names == [
        "researcher#p1/coder#k1/confirm:ConfirmWrites",
        "researcher#p1/coder#k2/confirm:ConfirmWrites",
    ]
    assert sorted(address(i) for i in first.interrupts) == [
        ["researcher#p1", "coder#k1"],
        ["researcher#p1", "coder#k2"],
    ]
    assert {i.tool_call.arguments["text"] for i in first.interrupts} == {"a", "b"}
    assert not effects.exists()
    one, two = sorted(first.interrupts, key=lambda i: i.name)
    waiting = top.resume({one.id: "approve"})
    assert waiting.stop_reason == "interrupt"
    assert [i.id for i in waiting.interrupts] == [two.id]
    # targeted resume: the answered coder ran, the other still waits
    assert effects.read_text().split() == [one.tool_call.arguments["text"]]
    done = top.resume({two.id: "approve"})
    assert done.stop_reason == "end_turn", done.reason
    assert done.text == "planner done: researcher done: wrote a + wrote b"
    assert sorted(effects.read_text().split()) == ["a", "b"]
    # each invocation's usage has the agents it ran: k1 ran in the targeted resume
    assert "researcher#p1/coder#k1" in waiting.usage.by_agent
    paths = set(done.usage.by_agent) | set(waiting.usage.by_agent)
    assert {"researcher#p1", "researcher#p1/coder#k1", "researcher#p1/coder#k2"} <= paths


def test_a_denied_nested_confirm_reaches_the_child_as_a_denial(tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    top = agent_tree.build(None, effects)
    first = top("plan")
    done = top.resume({i.id: "deny" for i in first.interrupts})
    assert done.stop_reason == "end_turn"
    assert not effects.exists()


def _step(db: str, effects: Path, *args: str) -> dict[str, Any]:
    return agent_tree.step(db, effects, *args)


def test_a_three_level_tree_is_answered_in_two_resumes_from_two_processes(
    db: str, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    first = _step(db, effects, "start")
    assert first["stop_reason"] == "interrupt"
    assert len(first["interrupts"]) == 2
    assert all(i["point"].startswith("researcher#p1/coder#k") for i in first["interrupts"])
    one, two = (i["id"] for i in first["interrupts"])
    second = _step(db, effects, "resume", json.dumps({one: "approve"}))
    assert second["stop_reason"] == "interrupt"
    assert [i["id"] for i in second["interrupts"]] == [two]
    assert len(effects.read_text().split()) == 1  # targeted resume: the answered coder ran
    third = _step(db, effects, "resume", json.dumps({two: "approve"}))
    assert third["stop_reason"] == "end_turn", third
    assert third["text"] == "planner done: researcher done: wrote a + wrote b"
    assert sorted(effects.read_text().split()) == ["a", "b"]
    # every child is a journaled session of its own in the parent's store, and the
    # approvals inbox has the tree's two questions under the top session
    import asyncio

    async def look() -> tuple[dict[str, Any], list[Any]]:
        store = agent_tree.open_store(db)
        leaf = await store.load("tree-1/researcher#1.p1/coder#1.k1")
        mid = await store.load("tree-1/researcher#1.p1")
        assert leaf is not None
        assert mid is not None
        meta = {"mid": mid.metadata, "leaf": leaf.metadata}
        found = await store.approvals.find(session_id="tree-1")
        await store.close()
        return meta, found

    meta, approvals = asyncio.run(look())
    assert meta["mid"]["tether_subagent"] == {
        "parent_session": "tree-1",
        "agent_path": "researcher#p1",
    }
    assert meta["leaf"]["tether_subagent"] == {
        "parent_session": "tree-1/researcher#1.p1",
        "agent_path": "researcher#p1/coder#k1",
    }
    assert sorted(a.name for a in approvals) == sorted(i["name"] for i in first["interrupts"])
    assert {a.tool for a in approvals} == {"write"}


def test_a_sigkill_while_a_grandchilds_tool_runs_resumes_without_repeating_it(
    db: str, tmp_path: Path
) -> None:
    import os
    import signal
    import time

    effects = tmp_path / "effects.txt"
    env = {**os.environ, "TETHER_TREE_CRASH": "1", "TETHER_TREE_HANG": "a"}
    script = [sys.executable, str(SUPPORT / "agent_tree.py"), db, str(effects)]
    proc = subprocess.Popen([*script, "start"], env=env, stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while "a" not in (effects.read_text().split() if effects.exists() else []):
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # let the sibling coder finish (or not): both outcomes must hold
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    time.sleep(1.2)  # the dead process's 1 s leases expire
    env.pop("TETHER_TREE_HANG")

    def step(*args: str) -> dict[str, Any]:
        done = subprocess.run(
            [*script, *args], env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr
        out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return out

    recovered = step("resume", "{}")
    assert recovered["stop_reason"] == "interrupt", recovered
    doubts = recovered["interrupts"]
    assert [i["point"] for i in doubts if "coder#k1" in i["point"]] == [
        "researcher#p1/coder#k1/in_doubt"
    ]
    assert all(i["source"] == "in_doubt" for i in doubts)
    answers = {i["id"]: {"skip": "ok (done before the crash)"} for i in doubts}
    done = step("resume", json.dumps(answers))
    assert done["stop_reason"] == "end_turn", done
    assert done["text"].startswith("planner done: researcher done: wrote a + wrote b")
    assert sorted(effects.read_text().split()) == ["a", "b"]  # each side effect once


def test_a_child_with_an_output_type_returns_its_object_as_json() -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        label: str
        score: int

    child = Agent(model=ScriptedModel(['{"label": "spam", "score": 9}']))
    parent = Agent(
        model=ScriptedModel(delegating("classify")),
        tools=[child.as_tool("classify", output_type=Verdict)],
    )
    result = parent("go")
    tool_text = parent.messages[2].tool_results[0].content
    assert json.loads(tool_text) == {"label": "spam", "score": 9}
    assert result.text == "parent: " + tool_text


def test_cancelling_the_parent_reaches_the_running_child_and_its_tool() -> None:
    import asyncio
    import threading

    started = threading.Event()
    outcome: list[str] = []

    @tool
    async def slow() -> str:
        """Take a long time."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "slept"

    child = Agent(
        model=ScriptedModel(lambda m, s: {"tool_calls": [{"name": "slow", "args": {}}]}),
        tools=[slow],
    )
    parent = Agent(model=ScriptedModel(delegating("sleeper")), tools=[child.as_tool("sleeper")])
    results: list[Any] = []
    runner = threading.Thread(target=lambda: results.append(parent("go")))
    runner.start()
    assert started.wait(10)
    parent.cancel()
    runner.join(10)
    assert not runner.is_alive()
    assert results[0].stop_reason == "cancelled"
    assert outcome == ["cancelled"]


def test_hooks_of_every_agent_in_the_tree_see_its_path(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    class Record(InterventionHandler):  # the top's policy runs in every child too
        def before_tool_call(self, event: BeforeToolCall) -> None:
            seen.append((event.agent.path, event.tool_call.name))

    top = agent_tree.build(None, tmp_path / "effects.txt", confirm=False, policies=(Record(),))
    assert top("plan").stop_reason == "end_turn"
    assert sorted(seen) == [
        ("", "researcher"),
        ("researcher#p1", "coder"),
        ("researcher#p1", "coder"),
        ("researcher#p1/coder#k1", "write"),
        ("researcher#p1/coder#k2", "write"),
    ]


def test_tether_worker_resumes_a_tree_once_its_approvals_are_decided(tmp_path: Path) -> None:
    import asyncio

    from tether.ops.worker import Worker, WorkerConfig

    db, effects = str(tmp_path / "tether.db"), tmp_path / "effects.txt"
    first = agent_tree.build(db, effects)("plan")
    assert first.stop_reason == "interrupt"
    assert len(first.interrupts) == 2

    async def decide_and_work() -> list[Any]:
        store = SQLiteStore(db)
        for approval in await store.approvals.pending(session_id="tree-1"):
            await store.approvals.decide(approval.id, "approve", decided_by="alice")

        def factory(session_id: str) -> Agent:
            assert session_id == "tree-1"  # child sessions are never claimed by themselves
            return agent_tree.build(db, effects)

        worker = Worker(store, factory, WorkerConfig(poll=0.05, listen=False))
        outcomes = await worker.run(once=True)
        await store.close()
        return outcomes

    outcomes = asyncio.run(decide_and_work())
    assert [(o.session_id, o.outcome) for o in outcomes] == [("tree-1", "completed")]
    assert sorted(effects.read_text().split()) == ["a", "b"]


def test_the_approvals_cli_lists_the_trees_questions_with_their_paths(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tether.ops.cli import app

    db, effects = str(tmp_path / "tether.db"), tmp_path / "effects.txt"
    agent_tree.build(db, effects)("plan")
    env: dict[str, str | None] = {"COLUMNS": "250", "NO_COLOR": "1", "TETHER_STORE": None}
    listed = CliRunner(env=env).invoke(app, ["approvals", "list", "--store", db])
    assert listed.exit_code == 0, listed.output
    assert listed.output.count("tree-1") == 2  # both under the top session
    shown = CliRunner(env=env).invoke(
        app, ["approvals", "show", _approval_id(db, "coder#k1"), "--store", db]
    )
    assert "researcher#p1/coder#k1/confirm:ConfirmWrites" in shown.output
    assert "write 'a'?" in shown.output


def _approval_id(db: str, step: str) -> str:
    import asyncio

    rows = asyncio.run(SQLiteStore(db).approvals.pending(session_id="tree-1"))
    [row] = [r for r in rows if step in r.name]
    return row.id


def test_childrens_stream_events_reach_the_parents_stream_tagged_with_their_path(
    tmp_path: Path,
) -> None:
    import asyncio

    from tether.events import FinalResult, SubAgentEvent, TextDelta, ToolFinished, ToolStarted

    top = agent_tree.build(None, tmp_path / "effects.txt", confirm=False)

    async def collect() -> list[Any]:
        return [event async for event in top.stream("plan")]

    events = asyncio.run(collect())
    assert isinstance(events[-1], FinalResult)
    forwarded = [e for e in events if isinstance(e, SubAgentEvent)]
    texts = {(e.path, e.event.text) for e in forwarded if isinstance(e.event, TextDelta)}
    assert ("researcher#p1/coder#k1", "wrote a") in texts
    assert ("researcher#p1/coder#k2", "wrote b") in texts
    writes = [e.path for e in forwarded if isinstance(e.event, ToolStarted)]
    assert sorted(writes) == [
        "researcher#p1",  # the researcher's two coder calls
        "researcher#p1",
        "researcher#p1/coder#k1",
        "researcher#p1/coder#k2",
    ]
    # in order: the researcher call starts, its tree's events, then it finishes
    kinds = [type(e) for e in events]
    first_started = kinds.index(ToolStarted)
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    assert all(isinstance(e, SubAgentEvent) for e in events[first_started + 1 : finished])
    assert not any(isinstance(e, FinalResult) for e in events[:-1])  # children's are not forwarded


def test_childrens_stream_events_reach_the_parents_stream_live_while_the_child_runs() -> None:
    import asyncio

    from tether.events import StreamEvent, SubAgentEvent, ToolFinished, ToolProgress, ToolStarted

    release = asyncio.Event()

    @tool
    async def wait_here(ctx: ToolContext) -> str:
        """Reports, then blocks until released."""
        ctx.progress(1, 3, "waiting")
        await release.wait()
        return "released"

    child = Agent(
        model=ScriptedModel(
            [{"tool_calls": [{"id": "w1", "name": "wait_here", "args": {}}]}, "child done"]
        ),
        tools=[wait_here],
    )
    parent = Agent(
        model=ScriptedModel(delegating("researcher")),
        tools=[child.as_tool("researcher", "Researches")],
    )
    before: list[StreamEvent] = []

    async def main() -> list[StreamEvent]:
        events: list[StreamEvent] = []
        async for event in parent.stream("go"):
            events.append(event)
            if not release.is_set():
                before.append(event)
            if isinstance(event, SubAgentEvent) and isinstance(event.event, ToolProgress):
                release.set()  # only now can the child's tool (and so the parent's call) end
        return events

    events = asyncio.run(asyncio.wait_for(main(), 20))
    assert events[-1].result.text == "parent: child done"  # type: ignore[union-attr]
    forwarded = [(e.path, type(e.event).__name__) for e in before if isinstance(e, SubAgentEvent)]
    assert ("researcher#d1", "ModelCallStarted") in forwarded
    assert forwarded[-2:] == [("researcher#d1", "ToolStarted"), ("researcher#d1", "ToolProgress")]
    progress = before[-1].event  # type: ignore[union-attr]
    assert progress == ToolProgress("wait_here", "w1", "researcher#d1", 1, 3, "waiting")
    assert not any(isinstance(e, ToolFinished) for e in before)
    # the parent's call ends after everything its child did
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    assert isinstance(events[finished - 1], SubAgentEvent)
    started = [i for i, e in enumerate(events) if isinstance(e, ToolStarted)]
    assert started == [started[0]]
    assert started[0] < events.index(before[-1])
