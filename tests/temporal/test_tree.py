"""A three-level agent tree on Temporal: the bottom's interrupts reach the top workflow
with their paths, are answered in the inbox, and every write runs once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.temporal import PROGRESS_QUERY, AgentWorkflow, TetherPlugin


@pytest.fixture
async def store(private_tmp: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def test_interrupts_at_the_bottom_of_a_tree_are_answered_from_the_inbox(
    temporal_client: Any, store: SQLiteStore, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from temporalio.worker import Replayer, Worker

    out = private_tmp / "effects.txt"
    monkeypatch.setenv("TETHER_TEMPORAL_OUT", str(out))
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-tree-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(app="temporal_tree_app:agent_factory", store=store, forward_every=0.1)
    async with Worker(temporal_client, task_queue=queue, plugins=[plugin]):
        handle = await temporal_client.start_workflow(
            AgentWorkflow.run, "plan it", id=wid, task_queue=queue
        )
        for _ in range(300):
            progress = await handle.query(PROGRESS_QUERY)
            if progress["status"] == "waiting":
                break
            await asyncio.sleep(0.1)
        pending = progress["interrupts"]
        assert len(pending) == 2
        assert {p["name"] for p in pending} == {
            "researcher#p1/coder#k1/confirm:ConfirmWrites",
            "researcher#p1/coder#k2/confirm:ConfirmWrites",
        }
        assert {p["arguments"]["text"] for p in pending} == {"a", "b"}
        rows = await store.approvals.pending(session_id=wid)
        assert {r.interrupt_id for r in rows} == {p["id"] for p in pending}
        for row in rows:
            await store.approvals.decide(row.id, "approve", decided_by="ops@test")
        result = await asyncio.wait_for(handle.result(), 90)
    assert result["stop_reason"] == "end_turn"
    assert result["text"].startswith("planner done: researcher done:")
    assert sorted(out.read_text().splitlines()) == ["a", "b"]
    history = await handle.fetch_history()
    await Replayer(workflows=[], plugins=[plugin]).replay_workflow(history)
