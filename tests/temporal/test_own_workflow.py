"""An application's own workflow calling a tether agent: AgentWorkflow as its child."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporal_own_workflow import Onboarding

from tether.durable import SQLiteStore
from tether.temporal import ANSWER_UPDATE, PROGRESS_QUERY, TetherPlugin

APP = "temporal_app:agent_factory"


@pytest.fixture
async def store(private_tmp: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def test_an_applications_workflow_runs_the_agent_as_its_child_and_gets_its_outcome(
    temporal_client: Any, store: SQLiteStore, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from temporalio.worker import Worker

    monkeypatch.setenv("TETHER_TEMPORAL_OUT", str(private_tmp / "sent.txt"))
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"onboard-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(app=APP, store=store)
    async with Worker(temporal_client, task_queue=queue, workflows=[Onboarding], plugins=[plugin]):
        parent = await temporal_client.start_workflow(
            Onboarding.run, "ada", id=wid, task_queue=queue
        )
        agent = temporal_client.get_workflow_handle(f"{wid}-agent")
        for _ in range(300):
            try:
                progress = await agent.query(PROGRESS_QUERY)
            except Exception:  # not started yet
                progress = {"status": "starting"}
            if progress["status"] == "waiting":
                break
            await asyncio.sleep(0.1)
        (pending,) = progress["interrupts"]
        await agent.execute_update(ANSWER_UPDATE, args=[{pending["id"]: True}, "app@test"])
        done = await asyncio.wait_for(parent.result(), 60)
    assert done == "ada: end_turn: done: sent to ada@example.com"
    assert (private_tmp / "sent.txt").read_text().splitlines() == [
        f"{wid}-agent ada@example.com hi"
    ]
