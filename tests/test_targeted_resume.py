"""Targeted resume (issue 23): answering some interrupts of a tool batch runs exactly those
calls; the rest stay pending (same ids, same approval rows) and come back in the next Result."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from targeted_batch import SESSION, build

from tether import AnswerError
from tether.durable import Store

SUPPORT = Path(__file__).parent / "support"


def _effects(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def test_a_parallel_batch_of_two_confirms_is_answered_one_call_at_a_time(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    first = await build(stores(), effects).invoke_async("pay both")
    assert first.stop_reason == "interrupt"
    bob, ann = first.interrupts  # in the batch's order
    assert (bob.tool_call and bob.tool_call.id, ann.tool_call and ann.tool_call.id) == ("t1", "t2")

    store = stores()  # a new store object on the same database, as another process has
    second = build(store, effects)
    partial = await second.resume_async({bob.id: True})
    assert partial.stop_reason == "interrupt"
    assert partial.interrupts == [ann]  # the same interrupt: same id, question and call
    assert second.pending_interrupts == [ann]
    assert _effects(effects) == ["bob"]  # exactly the answered call ran
    assert not [m for m in second.messages if m.role == "tool"]  # the batch is still open
    rows = {a.interrupt_id: a for a in await store.approvals.find(session_id=SESSION)}
    assert set(rows) == {bob.id, ann.id}  # no new row for the question still open
    assert (rows[bob.id].status, rows[ann.id].status) == ("approved", "pending")
    assert [a.id for a in await store.approvals.pending(session_id=SESSION)] == [rows[ann.id].id]

    third = build(stores(), effects)
    done = await third.resume_async({ann.id: True})
    assert done.stop_reason == "end_turn", done.reason
    assert done.text == "paid: sent to bob + sent to ann"
    assert _effects(effects) == ["bob", "ann"]  # nothing ran twice
    [results] = [m for m in third.messages if m.role == "tool"]  # one message, batch order
    assert [r.tool_call_id for r in results.tool_results] == ["t1", "t2"]
    after = {a.interrupt_id: a for a in await third.store.approvals.find(session_id=SESSION)}
    assert after[ann.id].id == rows[ann.id].id  # the same approval row, now decided
    assert after[ann.id].status == "approved"


async def test_a_denied_call_is_settled_alone_and_its_sibling_keeps_waiting(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    agent = build(stores(), effects)
    partial = await agent.resume_async({ann.id: "deny"})
    assert [i.id for i in partial.interrupts] == [bob.id]
    assert _effects(effects) == []
    done = await build(stores(), effects).resume_async({bob.id: "approve"})
    assert done.stop_reason == "end_turn"
    assert done.text.startswith("paid: sent to bob + Denied")
    assert _effects(effects) == ["bob"]


async def test_an_answer_to_no_pending_interrupt_is_refused_and_nothing_runs(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    store = stores()
    before = await store.load(SESSION)
    assert before is not None
    agent = build(store, effects)
    with pytest.raises(AnswerError) as refused:
        await agent.resume_async({bob.id: True, "nope-1": True, "nope-2": False})
    assert "unknown interrupt id(s) ['nope-1', 'nope-2']" in str(refused.value)
    assert bob.id in str(refused.value)
    assert ann.id in str(refused.value)
    assert _effects(effects) == []  # nothing ran, not even the call answered alongside
    after = await store.load(SESSION)
    assert after is not None
    assert after.version == before.version  # nothing was journaled
    assert [a.status for a in await store.approvals.find(session_id=SESSION)] == ["pending"] * 2
    assert agent.pending_interrupts == [bob, ann]
    # an id answered already is no longer pending: answering it again is refused too
    await agent.resume_async({bob.id: True})
    with pytest.raises(AnswerError, match="unknown interrupt id"):
        await agent.resume_async({bob.id: True})
    assert _effects(effects) == ["bob"]


def _step(db: str, effects: Path, *args: str, dies: bool = False) -> dict[str, Any]:
    """One step of tests/support/targeted_batch.py in a fresh process."""
    done = subprocess.run(
        [sys.executable, str(SUPPORT / "targeted_batch.py"), db, str(effects), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if dies:
        assert done.returncode == -9, done.stdout + done.stderr  # SIGKILL
        return {}
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


async def _fold(db: str) -> Any:
    from agent_tree import open_store

    from tether.journal_fold import fold

    store = open_store(db)
    try:
        record = await store.load(SESSION)
        assert record is not None
        assert record.status == "running"  # it died mid-run
        return fold(record)
    finally:
        await store.close()


def test_each_answer_in_its_own_process(db: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    first = _step(db, effects, "start")
    assert first["stop_reason"] == "interrupt"
    bob, ann = first["interrupts"]
    second = _step(db, effects, "resume", json.dumps({ann: "approve"}))
    assert (second["stop_reason"], second["interrupts"]) == ("interrupt", [bob])
    assert _effects(effects) == ["ann"]
    third = _step(db, effects, "resume", json.dumps({bob: "approve"}))
    assert third["stop_reason"] == "end_turn", third
    assert third["text"] == "paid: sent to bob + sent to ann"  # the batch's order
    assert _effects(effects) == ["ann", "bob"]


def test_a_sigkill_after_the_answered_calls_result_resumes_with_it_done(
    db: str, tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = _step(db, effects, "start")["interrupts"]
    # answer bob; the process dies right after bob's result is journaled, before the run
    # suspends again for ann
    _step(db, effects, "die", json.dumps({bob: "approve"}), dies=True)
    assert _effects(effects) == ["bob"]
    # the journal of the dead run: bob's result saved, ann's question still open (what
    # `tether sessions show` lists), bob's answered one not
    view = asyncio.run(_fold(db))
    assert [i.id for i in view.interrupts] == [ann]
    assert view.pending is not None
    assert [r is not None for r in view.pending[1]] == [True, False]
    # another process: bob is done (its answer and result are in the journal), ann pending
    waiting = _step(db, effects, "resume", "{}")
    assert (waiting["stop_reason"], waiting["interrupts"]) == ("interrupt", [ann])
    assert _effects(effects) == ["bob"]
    done = _step(db, effects, "resume", json.dumps({ann: "approve"}))
    assert done["stop_reason"] == "end_turn", done
    assert done["text"] == "paid: sent to bob + sent to ann"
    assert _effects(effects) == ["bob", "ann"]  # nothing ran twice


def test_a_sigkill_then_the_last_answer_finishes_the_batch_at_once(db: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = _step(db, effects, "start")["interrupts"]
    _step(db, effects, "die", json.dumps({bob: "approve"}), dies=True)
    done = _step(db, effects, "resume", json.dumps({ann: "approve"}))
    assert done["stop_reason"] == "end_turn", done
    assert done["text"] == "paid: sent to bob + sent to ann"
    assert _effects(effects) == ["bob", "ann"]


def test_calls_left_in_doubt_are_settled_one_at_a_time_and_a_skip_never_reruns(
    db: str, tmp_path: Path
) -> None:
    import os
    import signal
    import time

    from agent_tree import open_store

    effects = tmp_path / "effects.txt"
    env = {**os.environ, "TARGETED_CRASH": "1", "TARGETED_HANG": "1"}
    script = [sys.executable, str(SUPPORT / "targeted_batch.py"), db, str(effects)]
    proc = subprocess.Popen([*script, "start"], env=env, stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while sorted(_effects(effects)) != ["ann", "bob"]:  # both calls started, in parallel
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    time.sleep(1.2)  # the dead process's 1 s lease expires

    async def settle() -> None:
        store = open_store(db)
        agent = build(store, effects, crash=True)
        recovered = await agent.resume_async()
        assert recovered.stop_reason == "interrupt"
        bob, ann = recovered.interrupts
        assert (bob.source, ann.source) == ("in_doubt", "in_doubt")
        # the operator says bob's transfer did not happen: retry it; ann's stays in doubt
        partial = await agent.resume_async({bob.id: "retry"})
        assert partial.interrupts == [ann]
        assert sorted(_effects(effects)) == ["ann", "bob", "bob"]  # bob retried, ann not
        # ann's did happen: skip with its result. The same agent object: it never re-runs
        done = await agent.resume_async({ann.id: {"skip": "sent to ann"}})
        assert done.stop_reason == "end_turn", done.reason
        assert done.text == "paid: sent to bob + sent to ann"
        assert sorted(_effects(effects)) == ["ann", "bob", "bob"]
        await store.close()

    asyncio.run(settle())
