"""Durable at every node: child sessions, interrupts anywhere, resume in a new process."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import AnswerError
from tether.durable import Store

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

import workflow_agents
from workflow_agents import Backend, effects_of, review_workflow


async def test_each_node_run_is_a_child_session_of_the_workflow(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    store = stores()
    wf = review_workflow(store, tmp_path / "effects")
    result = await wf.invoke_async("the plan")
    assert result.stop_reason == "interrupt"  # legal's write waits for the workflow's Confirm
    ids = {s.session_id for s in await store.list_sessions()}
    assert {"wf-1", "wf-1/review#3.2", "wf-1/review#3.2/legal#1.1"} <= ids
    record = await store.load("wf-1/review#3.2/legal#1.1")
    assert record is not None
    assert record.metadata["tether_subagent"]["agent_path"] == "review#2/legal#1"


async def test_an_interrupt_deep_in_a_parallel_branch_suspends_the_workflow_and_resumes_there(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    wf = review_workflow(stores(), effects)
    first = await wf.invoke_async("the plan")
    assert first.stop_reason == "interrupt"
    [pending] = first.interrupts
    assert pending.name == "review#2/legal#1/confirm:ConfirmWrites"
    assert pending.reason == "write 'legal'?"
    # the branch that did not ask ran to its end while the other waited
    assert effects_of(effects) == ["draft"]
    again = review_workflow(stores(), effects)  # a new store object, as a new process
    assert again.pending_interrupts == [] or again.pending_interrupts[0].id == pending.id
    done = await again.resume_async({pending.id: "approve"})
    assert done.stop_reason == "end_turn"
    assert done.text == ('summary: ["legal wrote (ok legal)", "tech: draft of the plan"]')
    assert effects_of(effects) == ["draft", "legal"]  # the finished node never ran again
    # usage per node path, per run: tech ran (and was counted) in the first run only
    assert "review#2/tech#2" in first.usage.by_agent
    assert set(done.usage.by_agent) == {"review#2", "review#2/legal#1", "summary#3"}


async def test_every_pending_interrupt_of_parallel_branches_comes_back_in_one_result(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    wf = review_workflow(stores(), effects, tech_asks=True)
    first = await wf.invoke_async("the plan")
    assert first.stop_reason == "interrupt"
    assert sorted(i.name for i in first.interrupts) == [
        "review#2/legal#1/confirm:ConfirmWrites",
        "review#2/tech#2/confirm:ConfirmWrites",
    ]
    answers = {i.id: "approve" for i in first.interrupts}
    done = await review_workflow(stores(), effects, tech_asks=True).resume_async(answers)
    assert done.stop_reason == "end_turn"
    assert sorted(effects_of(effects)) == ["draft", "legal", "tech"]


async def test_answer_ids_matching_no_pending_interrupt_are_refused_and_nothing_runs(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await review_workflow(stores(), effects).invoke_async("the plan")
    [pending] = first.interrupts
    store = stores()
    before = {
        s.session_id: len(await store.read_entries(s.session_id))
        for s in await store.list_sessions()
    }
    wf = review_workflow(stores(), effects)
    with pytest.raises(AnswerError, match=r"unknown interrupt id\(s\) \['nope'\]"):
        await wf.resume_async({"nope": "approve", pending.id: "approve"})
    assert effects_of(effects) == ["draft"]
    after = {
        s.session_id: len(await store.read_entries(s.session_id))
        for s in await store.list_sessions()
    }
    assert after == before  # not a journal entry written, in any node's session either
    record = await store.load("wf-1")
    assert record is not None
    assert record.status == "suspended"  # still waiting for the same answer
    done = await review_workflow(stores(), effects).resume_async({pending.id: "approve"})
    assert done.stop_reason == "end_turn"
    assert effects_of(effects) == ["draft", "legal"]


async def test_a_denied_write_deep_in_the_workflow_is_not_run(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await review_workflow(stores(), effects).invoke_async("the plan")
    [pending] = first.interrupts
    done = await review_workflow(stores(), effects).resume_async({pending.id: "deny"})
    assert done.stop_reason == "end_turn"
    assert effects_of(effects) == ["draft"]
    assert "legal wrote" in done.text


async def test_a_workflow_suspended_in_one_process_resumes_in_others(backend: Backend) -> None:
    effects = backend.effects
    wf = backend.build("review")
    first = workflow_agents.outcome(wf, await wf.invoke_async("the plan"))
    assert first["stop_reason"] == "interrupt"
    assert sorted(i["name"] for i in first["interrupts"]) == [
        "review#2/legal#1/confirm:ConfirmWrites",
        "review#2/tech#2/confirm:ConfirmWrites",
    ]
    legal, tech = sorted(first["interrupts"], key=lambda i: i["name"])
    refused = await backend.resume("review", {"bogus": "approve"})  # a second process
    assert refused["error"] == "AnswerError"
    assert "bogus" in refused["message"]
    answers = {legal["id"]: "approve", tech["id"]: "approve"}
    done = await backend.resume("review", answers)  # a third
    assert done["stop_reason"] == "end_turn"
    assert done["text"] == 'summary: ["legal wrote (ok legal)", "tech wrote (ok tech)"]'
    assert sorted(effects_of(effects)) == ["draft", "legal", "tech"]


async def test_a_finished_workflow_session_is_not_run_again(backend: Backend) -> None:
    wf = backend.build("review")
    answers = {i.id: "approve" for i in (await wf.invoke_async("the plan")).interrupts}
    assert (await wf.resume_async(answers)).stop_reason == "end_turn"
    again = await backend.resume("review", {})  # a second process
    assert again["error"] == "SessionStateError", again
    assert "session wf-1 is not suspended" in again["message"]
    assert sorted(effects_of(backend.effects)) == ["draft", "legal", "tech"]


def test_a_node_killed_inside_a_non_idempotent_call_asks_a_human_on_resume(
    db: str, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import time

    effects = tmp_path / "effects"
    env = {**os.environ, "TETHER_WF_CRASH": "1", "TETHER_WF_HANG": "legal"}
    script = [sys.executable, workflow_agents.__file__, db, str(effects), "start"]
    proc = subprocess.Popen(script, env=env, stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while "legal" not in effects_of(effects):
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        time.sleep(0.3)  # let the sibling branch finish (or not): both outcomes must hold
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    time.sleep(1.2)  # the dead process's 1 s leases expire
    recovered = workflow_agents.step(db, effects, "resume", "{}", crash=True)
    assert recovered["stop_reason"] == "interrupt", recovered
    [doubt] = recovered["interrupts"]
    assert doubt["source"] == "in_doubt"
    assert doubt["point"] == "review#2/legal#1/in_doubt"
    answers = json.dumps({doubt["id"]: {"skip": "ok legal (done before the crash)"}})
    done = workflow_agents.step(db, effects, "resume", answers, crash=True)
    assert done["stop_reason"] == "end_turn", done
    assert done["text"].startswith('summary: ["legal wrote (ok legal (done before the crash))"')
    assert effects_of(effects) == ["draft", "legal"]  # each side effect once, draft not re-run


def test_a_nested_approval_is_one_inbox_row_and_the_worker_finishes_the_workflow(
    tmp_path: Path,
) -> None:
    import asyncio

    from tether.durable import SQLiteStore
    from tether.ops.worker import Worker, WorkerConfig

    db, effects = tmp_path / "tether.db", tmp_path / "effects"
    first = review_workflow(SQLiteStore(db), effects, tech_asks=True).run("the plan")
    assert first.stop_reason == "interrupt"

    async def decide_and_work() -> list[Any]:
        store = SQLiteStore(db)
        rows = await store.approvals.pending(session_id="wf-1")
        assert sorted(r.name for r in rows) == [
            "review#2/legal#1/confirm:ConfirmWrites",
            "review#2/tech#2/confirm:ConfirmWrites",
        ]
        for row in rows:
            await store.approvals.decide(row.id, "approve", decided_by="alice")

        def factory(session_id: str) -> Any:
            assert session_id == "wf-1"  # the nodes' sessions are never claimed alone
            return review_workflow(SQLiteStore(db), effects, tech_asks=True).agent

        worker = Worker(store, factory, WorkerConfig(poll=0.05, listen=False))
        outcomes = await worker.run(once=True)
        await store.close()
        return outcomes

    outcomes = asyncio.run(decide_and_work())
    assert [(o.session_id, o.outcome) for o in outcomes] == [("wf-1", "completed")]
    assert sorted(effects_of(effects)) == ["draft", "legal", "tech"]


async def test_an_interrupt_in_a_loop_is_asked_once_per_round_and_resumes_once(
    backend: Backend,
) -> None:
    result = await backend.build("loop").invoke_async("x")
    asked: list[str] = []
    [pending] = result.interrupts
    asked.append(pending.name)
    # the first round's answer in a second process: it asks round two's there, once
    elsewhere = await backend.resume("loop", {pending.id: "approve"})
    assert elsewhere["stop_reason"] == "interrupt", elsewhere
    [second] = elsewhere["interrupts"]
    asked.append(second["name"])
    assert effects_of(backend.effects) == ["x"]  # round two waits for its answer
    # round one's answer again (a stale id) is refused: it cannot approve round two's write
    with pytest.raises(AnswerError, match=rf"unknown interrupt id\(s\) \['{pending.id}'\]"):
        await backend.build("loop").resume_async({pending.id: "approve"})
    assert effects_of(backend.effects) == ["x"]
    result = await backend.build("loop").resume_async({second["id"]: "approve"})
    while result.stop_reason == "interrupt":
        [pending] = result.interrupts
        asked.append(pending.name)
        result = await backend.build("loop").resume_async({pending.id: "approve"})
    assert asked == [
        "w#1/confirm:ConfirmWrites",
        "w#2/confirm:ConfirmWrites",
        "w#3/confirm:ConfirmWrites",
    ]
    assert result.text == "x+++"
    assert effects_of(backend.effects) == ["x", "x+", "x++"]  # each round's write once


async def test_an_interrupt_three_workflows_deep_resumes_in_another_process(
    backend: Backend,
) -> None:
    first = await backend.build("deep").invoke_async("go")
    assert [i.name for i in first.interrupts] == ["outer#1/middle#1/legal#1/confirm:ConfirmWrites"]
    done = await backend.resume("deep", {first.interrupts[0].id: "approve"})
    assert done["stop_reason"] == "end_turn", done
    assert done["text"] == '["legal wrote (ok legal)", "side"]'
    assert effects_of(backend.effects) == ["legal"]
    # the nested sessions' usage is counted under their paths in the resuming run
    assert "outer#1/middle#1/legal#1" in done["by_agent"]
