"""The worker and a partially decided session (issue 23, targeted resume): one decision of
two makes the session ready; the worker runs exactly the decided call, the session suspends
again for the other (its row still pending), and its decision finishes the batch."""

from __future__ import annotations

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
