"""The worker and a partially decided session (issue 23, targeted resume): one decision of
two makes the session ready; the worker runs exactly the decided call, the session suspends
again for the other (its row still pending), and its decision finishes the batch."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from targeted_batch import SESSION, build

from tether.durable import Store
from tether.ops.worker import Worker, WorkerConfig


def _effects(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


async def _status(store: Store) -> str:
    return {s.session_id: s.status for s in await store.list_sessions()}[SESSION]


async def test_the_worker_resumes_a_partially_decided_session(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    first = await build(stores(), effects).invoke_async("pay both")
    bob, ann = first.interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    assert await _status(inbox) == "suspended"

    await inbox.approvals.decide(rows[ann.id].id, "approve", decided_by="alice")
    assert await _status(inbox) == "ready"  # one of two decided: the answered call may run

    worker_store = stores()
    config = WorkerConfig(poll=0.05, listen=False)
    outcomes = await Worker(worker_store, lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert [(o.session_id, o.outcome) for o in outcomes] == [(SESSION, "suspended")]
    assert outcomes[0].detail == "1 approval(s) pending"
    assert _effects(effects) == ["ann"]  # exactly the decided call ran
    assert await _status(inbox) == "suspended"  # waiting for bob, not claimable
    pending = await inbox.approvals.pending(session_id=SESSION)
    assert [a.id for a in pending] == [rows[bob.id].id]  # the same row, still pending

    again = await Worker(worker_store, lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert again == []  # nothing is ready: the undecided call never runs by itself

    await inbox.approvals.decide(rows[bob.id].id, "deny", decided_by="bob", note="no")
    assert await _status(inbox) == "ready"
    done = await Worker(worker_store, lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert [(o.session_id, o.outcome) for o in done] == [(SESSION, "completed")]
    assert _effects(effects) == ["ann"]
    assert await _status(inbox) == "completed"
    decided = {a.interrupt_id: a.status for a in await inbox.approvals.find(session_id=SESSION)}
    assert decided == {bob.id: "denied", ann.id: "approved"}


async def test_a_decision_made_while_a_targeted_resume_runs_is_not_asked_again(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    """The inbox decides ann's row while the resume that answered bob runs (bob's call held
    inside its tool until the decision commits): the run re-suspends on ann with ann's row
    as it is (no second row: nobody is asked twice), the session ends the run ``ready``,
    and the worker finishes the batch with the inbox's decision."""
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    inside, decided = asyncio.Event(), asyncio.Event()

    async def hold_bob(to: str) -> None:
        if to == "bob":
            inside.set()
            await decided.wait()

    agent = build(stores(), effects, gate=hold_bob)
    resuming = asyncio.create_task(agent.resume_async({bob.id: True}))
    await asyncio.wait_for(inside.wait(), 30)
    assert await _status(inbox) == "running"
    await inbox.approvals.decide(rows[ann.id].id, "approve", decided_by="alice")
    assert await _status(inbox) == "running"  # not ready yet: the run holds the session
    decided.set()
    partial = await asyncio.wait_for(resuming, 30)
    agent.close()
    assert (partial.stop_reason, [i.id for i in partial.interrupts]) == ("interrupt", [ann.id])
    assert _effects(effects) == ["bob"]

    found = await inbox.approvals.find(session_id=SESSION)
    assert sorted((a.interrupt_id, a.id, a.status) for a in found) == sorted(
        [(bob.id, rows[bob.id].id, "approved"), (ann.id, rows[ann.id].id, "approved")]
    )  # one row per interrupt: ann's is the one alice decided
    assert await inbox.approvals.pending(session_id=SESSION) == []
    assert await _status(inbox) == "ready"  # the decision is not lost: a worker takes it
    raised = [r.data for r in await inbox.audit.records(SESSION) if r.event == "interrupt.raised"]
    assert sorted((r["interrupt_id"], r["approval_id"]) for r in raised) == sorted(
        (iid, row.id) for iid, row in rows.items()
    )  # each raised once (the held one is not raised again), naming its one row

    config = WorkerConfig(poll=0.05, listen=False)
    done = await Worker(stores(), lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert [(o.session_id, o.outcome) for o in done] == [(SESSION, "completed")]
    assert _effects(effects) == ["bob", "ann"]  # ann ran once, with alice's decision
    assert await _status(inbox) == "completed"
    after = await inbox.approvals.find(session_id=SESSION)
    assert sorted((a.interrupt_id, a.id) for a in after) == sorted(
        (a.interrupt_id, a.id) for a in found
    )


async def test_a_resume_without_answers_does_not_ask_again_what_the_inbox_decided(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    await inbox.approvals.decide(rows[ann.id].id, "approve", decided_by="alice")

    # a caller resumes with nothing: nothing runs, and ann's decided row stays the only one
    idle = await build(stores(), effects).resume_async()
    assert idle.stop_reason == "interrupt"
    assert _effects(effects) == []
    found = await inbox.approvals.find(session_id=SESSION)
    assert sorted((a.interrupt_id, a.id) for a in found) == sorted(
        (iid, row.id) for iid, row in rows.items()
    )
    assert [a.id for a in await inbox.approvals.pending(session_id=SESSION)] == [rows[bob.id].id]
    assert await _status(inbox) == "ready"

    config = WorkerConfig(poll=0.05, listen=False)
    outcomes = await Worker(stores(), lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert [(o.session_id, o.outcome) for o in outcomes] == [(SESSION, "suspended")]
    assert _effects(effects) == ["ann"]  # alice's decision ran; bob still waits
    assert [a.id for a in await inbox.approvals.pending(session_id=SESSION)] == [rows[bob.id].id]


async def test_an_edit_decided_while_a_targeted_resume_runs_runs_as_edited(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    inside, decided = asyncio.Event(), asyncio.Event()

    async def hold_bob(to: str) -> None:
        if to == "bob":
            inside.set()
            await decided.wait()

    agent = build(stores(), effects, gate=hold_bob)
    resuming = asyncio.create_task(agent.resume_async({bob.id: True}))
    await asyncio.wait_for(inside.wait(), 30)
    app = build(stores(), effects)  # the app's agent judges the edit (the inbox's validate)
    edited = await inbox.approvals.decide(
        rows[ann.id].id, "approve", decided_by="alice", edited_args={"to": "carol"}, validate=app
    )
    app.close()
    assert (edited.decision, edited.edited_args) == ("approve_edited", {"to": "carol"})
    decided.set()
    await asyncio.wait_for(resuming, 30)
    agent.close()
    assert await _status(inbox) == "ready"

    config = WorkerConfig(poll=0.05, listen=False)
    done = await Worker(stores(), lambda session_id: build(stores(), effects), config).run(
        once=True
    )
    assert [(o.session_id, o.outcome) for o in done] == [(SESSION, "completed")]
    assert _effects(effects) == ["bob", "carol"]  # ann's call ran once, as alice edited it


async def test_answers_for_reads_an_interrupt_asked_again_by_its_newest_row(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    """An interrupt asked again (an in-doubt call whose retry was cut off too) has an old
    decided row and a new pending one: the old answer is stale and is not handed to a
    worker (a stale retry would repeat a side effect)."""
    effects = tmp_path / "effects.txt"
    _, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    await inbox.approvals.decide(rows[ann.id].id, "approve", decided_by="alice")
    assert await inbox.approvals.answers_for(SESSION) == {ann.id: True}
    again = await inbox.approvals.request(SESSION, ann)  # asked again: a new pending row
    assert (again.id != rows[ann.id].id, again.status) == (True, "pending")
    assert await inbox.approvals.answers_for(SESSION) == {}
    await inbox.approvals.decide(again.id, "deny", decided_by="bob", note="no")
    assert await inbox.approvals.answers_for(SESSION) == {
        ann.id: {"approved": False, "reason": "no"}
    }


async def test_a_held_interrupt_asked_again_is_ready_only_when_its_newest_row_is_decided(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects.txt"
    bob, ann = (await build(stores(), effects).invoke_async("pay both")).interrupts
    inbox = stores()
    rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
    await inbox.approvals.decide(rows[ann.id].id, "approve", decided_by="alice")
    again = await inbox.approvals.request(SESSION, ann)  # ann asked again: a new pending row
    partial = await build(stores(), effects).resume_async({bob.id: True})
    assert [i.id for i in partial.interrupts] == [ann.id]
    assert _effects(effects) == ["bob"]
    assert await _status(inbox) == "suspended"  # ann's old decision does not count
    assert [a.id for a in await inbox.approvals.pending(session_id=SESSION)] == [again.id]


_DECIDE = """
import asyncio, sys
sys.path.insert(0, sys.argv[3])
from agent_tree import open_store
from tether.governance import decide_approval

async def main():
    store = open_store(sys.argv[1])
    await decide_approval(store, sys.argv[2], "approve", decided_by="alice (another process)")
    await store.close()

asyncio.run(main())
"""


async def test_a_decision_from_another_process_while_a_targeted_resume_runs_is_kept(
    db: str, tmp_path: Path
) -> None:
    """The inbox's decision path (``governance.decide_approval``, what the CLI and the HTTP
    API call) in another process, while bob's call is held inside its tool."""
    from agent_tree import open_store

    effects = tmp_path / "effects.txt"
    bob, ann = (await build(open_store(db), effects).invoke_async("pay both")).interrupts
    inbox = open_store(db)
    try:
        rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id=SESSION)}
        inside, decided = asyncio.Event(), asyncio.Event()

        async def hold_bob(to: str) -> None:
            if to == "bob":
                inside.set()
                await decided.wait()

        agent = build(open_store(db), effects, gate=hold_bob)
        resuming = asyncio.create_task(agent.resume_async({bob.id: True}))
        await asyncio.wait_for(inside.wait(), 30)
        support = str(Path(__file__).parents[1] / "support")
        other = [sys.executable, "-c", _DECIDE, db, rows[ann.id].id, support]
        done = await asyncio.to_thread(
            subprocess.run, other, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        decided.set()
        partial = await asyncio.wait_for(resuming, 30)
        agent.close()
        assert [i.id for i in partial.interrupts] == [ann.id]
        found = await inbox.approvals.find(session_id=SESSION)
        assert sorted((a.interrupt_id, a.id, a.status) for a in found) == sorted(
            (iid, row.id, "approved") for iid, row in rows.items()
        )
        assert await _status(inbox) == "ready"
        config = WorkerConfig(poll=0.05, listen=False)
        outcomes = await Worker(
            inbox, lambda session_id: build(open_store(db), effects), config
        ).run(once=True)
        assert [(o.session_id, o.outcome) for o in outcomes] == [(SESSION, "completed")]
        assert _effects(effects) == ["bob", "ann"]
    finally:
        await inbox.close()
