"""A worker SIGKILLed while a non-idempotent tool's activity runs: a new worker takes the
workflow over, the call goes to a human as in doubt (the journal's rule), it never runs
twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.temporal import AgentWorkflow

SUPPORT = Path(__file__).parents[1] / "support"


def worker(address: str, queue: str, store_url: str, out: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")])),
        "TETHER_TEMPORAL_OUT": str(out),
        "TETHER_TEMPORAL_SLOW": "60",
    }
    process = subprocess.Popen(
        [sys.executable, str(SUPPORT / "temporal_worker.py"), address, queue, store_url],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


async def until(check: Any, seconds: float, what: str) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        found = await check()
        if found:
            return found
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


@pytest.fixture
async def store(private_tmp: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def test_a_worker_killed_during_a_non_idempotent_tool_sends_it_to_a_human_once(
    temporal_client: Any, temporal_address: str, store: SQLiteStore, private_tmp: Path
) -> None:
    out = private_tmp / "sent.txt"
    url = f"sqlite:///{private_tmp / 'tether.db'}"
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-slow-{uuid.uuid4().hex[:8]}"
    first = await asyncio.to_thread(worker, temporal_address, queue, url, out)
    second = None
    try:
        handle = await temporal_client.start_workflow(
            AgentWorkflow.run, "write to ada", id=wid, task_queue=queue
        )
        (row,) = await until(lambda: store.approvals.pending(session_id=wid), 60, "the Confirm")
        await store.approvals.decide(row.id, "approve", decided_by="ops@test")  # the inbox
        await until(lambda: asyncio.to_thread(lambda: out.exists() and out.read_text()), 60, "send")
        first.send_signal(signal.SIGKILL)
        await asyncio.to_thread(first.wait)
        second = await asyncio.to_thread(worker, temporal_address, queue, url, out)

        async def in_doubt() -> list[Any]:
            return [
                a for a in await store.approvals.pending(session_id=wid) if a.source == "in_doubt"
            ]

        (doubt,) = await until(in_doubt, 90, "the in-doubt question")
        assert doubt.tool == "send"
        await store.approvals.decide(
            doubt.id, "respond", decided_by="ops@test", response={"skip": "sent (checked by hand)"}
        )
        result = await asyncio.wait_for(handle.result(), 90)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
    assert result["stop_reason"] == "end_turn"
    assert result["text"] == "done: sent (checked by hand)"
    assert out.read_text().splitlines() == [f"{wid} ada@example.com hi"]  # once
