"""``tether temporal worker --app workflow_app:agents_workflow_factory``: a factory returning
a workflow (of agents: a function step takes a ToolContext, which Temporal cannot give yet)
runs as an AgentWorkflow to its end; the legal branch's Confirm waits in the inbox with its
address and the decision made there reaches the workflow."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from workflow_app import AGENTS_ADDRESS

from tether.durable import SQLiteStore
from tether.temporal import PROGRESS_QUERY, AgentWorkflow

SUPPORT = Path(__file__).parents[1] / "support"
TETHER = str(Path(sys.executable).with_name("tether"))


async def _started(proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while "until SIGTERM" not in (text := await asyncio.to_thread(log.read_text)):
        assert proc.poll() is None, text
        assert time.monotonic() < deadline, text
        await asyncio.sleep(0.1)


async def test_a_workflow_factory_runs_to_its_end_on_a_temporal_worker(
    temporal_address: str, temporal_client: Any, private_tmp: Path
) -> None:
    db, out, log = private_tmp / "tether.db", private_tmp / "out.txt", private_tmp / "worker.log"
    queue, wid = f"tq-{uuid.uuid4().hex[:8]}", f"wf-app-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")])),
        "TETHER_WORKFLOW_OUT": str(out),
    }
    env.pop("TETHER_WORKFLOW_STORE", None)  # the worker's store is the plugin's
    cmd = [TETHER, "temporal", "worker", "--app", "workflow_app:agents_workflow_factory",
           "--address", temporal_address, "--task-queue", queue,
           "--store", f"sqlite:///{db}"]  # fmt: skip
    with log.open("w") as sink:  # the worker's own output, read below
        proc = subprocess.Popen(  # noqa: ASYNC220
            cmd, stdout=sink, stderr=subprocess.STDOUT, env=env
        )
    try:
        await _started(proc, log)
        handle = await temporal_client.start_workflow(
            AgentWorkflow.run, "the plan", id=wid, task_queue=queue
        )
        for _ in range(600):
            progress = await handle.query(PROGRESS_QUERY)
            if progress["status"] == "waiting":
                break
            await asyncio.sleep(0.1)
        assert [p["name"] for p in progress["interrupts"]] == [AGENTS_ADDRESS], progress
        store = SQLiteStore(db)
        try:
            [row] = await store.approvals.pending(session_id=wid)
            assert row.name == AGENTS_ADDRESS
            assert not out.exists()  # nothing ran before the decision
            await store.approvals.decide(row.id, "approve", decided_by="ops@test")
        finally:
            await store.close()
        result = await asyncio.wait_for(handle.result(), 90)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 30)
        print(await asyncio.to_thread(log.read_text))  # the worker log, shown on a failure
    assert result["stop_reason"] == "end_turn", result
    # the resumed run's model calls are the nodes' (legal's second, summary's): the
    # conductor's decisions are not counted on Temporal either (its clone keeps the hooks)
    assert result["usage"]["model_calls"] == 2, result["usage"]
    assert result["text"].startswith('summary: ["legal wrote (ok legal)", "tech: ')
    assert out.read_text().splitlines() == [f"{wid} legal"]  # once


def test_a_factory_of_neither_is_refused_before_the_worker_connects(private_tmp: Path) -> None:
    from ops_cli import cli

    db = private_tmp / "never.db"
    done = cli("temporal", "worker", "--app", "workflow_app:not_an_app", "--address",
               "127.0.0.1:1", "--task-queue", "q", "--store", f"sqlite:///{db}")  # fmt: skip
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    assert "workflow_app:not_an_app is annotated to return str, not an Agent or a Workflow" in said
    assert not db.exists()  # nothing created
