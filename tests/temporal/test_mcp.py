"""MCP tools on Temporal: the server is listed and called on the worker (activities), the
policy (a Confirm) runs in the workflow, and the history replays."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.temporal import ANSWER_UPDATE, PROGRESS_QUERY, AgentWorkflow, TetherPlugin

APP = "temporal_mcp_app:agent_factory"
SQUARED = '{"n":7,"square":49}'


@pytest.fixture
async def store(private_tmp: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def test_an_mcp_tool_runs_on_the_worker_under_the_workflows_policy(
    temporal_client: Any, store: SQLiteStore
) -> None:
    from temporalio.worker import Replayer, Worker

    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-mcp-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(app=APP, store=store)
    async with Worker(temporal_client, task_queue=queue, plugins=[plugin]):
        handle = await temporal_client.start_workflow(
            AgentWorkflow.run, "square seven", id=wid, task_queue=queue
        )
        for _ in range(600):
            progress = await handle.query(PROGRESS_QUERY)
            if progress["status"] == "waiting":
                break
            await asyncio.sleep(0.1)
        (pending,) = progress["interrupts"]
        assert (pending["tool"], pending["arguments"]) == ("square", {"n": 7})
        await handle.execute_update(ANSWER_UPDATE, args=[{pending["id"]: True}, None])
        result = await asyncio.wait_for(handle.result(), 60)
    assert result["stop_reason"] == "end_turn"
    assert result["text"] == "the square is " + SQUARED
    history = await handle.fetch_history()
    await Replayer(workflows=[], plugins=[TetherPlugin(app=APP, store=store)]).replay_workflow(
        history
    )
