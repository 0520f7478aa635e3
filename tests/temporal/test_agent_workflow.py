"""AgentWorkflow on the real dev server: approvals from the inbox and from code, edits,
refused answers, and replay of every history."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import SQLiteStore
from tether.temporal import ANSWER_UPDATE, PROGRESS_QUERY, AgentWorkflow, TetherPlugin

SUPPORT = Path(__file__).parents[1] / "support"
APP = "temporal_app:agent_factory"


@pytest.fixture
def out(private_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = private_tmp / "sent.txt"
    monkeypatch.setenv("TETHER_TEMPORAL_OUT", str(path))
    return path


@pytest.fixture
async def store(private_tmp: Path) -> AsyncIterator[SQLiteStore]:
    s = SQLiteStore(private_tmp / "tether.db")
    yield s
    await s.close()


async def waiting(handle: Any, seconds: float = 30.0) -> dict[str, Any]:
    """The progress of a run once it waits for answers."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        progress: dict[str, Any] = await handle.query(PROGRESS_QUERY)
        if progress["status"] == "waiting":
            return progress
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"the run did not wait for answers: {progress}")
        await asyncio.sleep(0.1)


def sent(out: Path) -> list[str]:
    return out.read_text().splitlines() if out.exists() else []


async def start(client: Any, queue: str, workflow_id: str) -> Any:
    return await client.start_workflow(
        AgentWorkflow.run, "write to ada", id=workflow_id, task_queue=queue
    )


def queue_name() -> str:
    return f"tq-{uuid.uuid4().hex[:8]}"


async def test_an_approval_decided_with_the_cli_completes_the_workflow(
    temporal_client: Any, store: SQLiteStore, out: Path, private_tmp: Path
) -> None:
    from temporalio.worker import Worker

    queue, wid = queue_name(), f"wf-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(app=APP, store=store, forward_every=0.1)
    async with Worker(temporal_client, task_queue=queue, plugins=[plugin]):
        handle = await start(temporal_client, queue, wid)
        progress = await waiting(handle)
        (pending,) = progress["interrupts"]
        assert (pending["tool"], pending["arguments"]) == (
            "send",
            {"to": "ada@example.com", "text": "hi"},
        )
        assert sent(out) == []
        (row,) = await store.approvals.pending(session_id=wid)
        cli = await asyncio.to_thread(
            subprocess.run,
            [str(Path(sys.executable).parent / "tether"), "approvals", "approve", row.id,
             "--store", f"sqlite:///{private_tmp / 'tether.db'}", "--as", "ops@example.com"],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")])},
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
        result = await asyncio.wait_for(handle.result(), 60)
        events = (await handle.query(PROGRESS_QUERY))["events"]
    assert result["stop_reason"] == "end_turn"
    assert result["text"] == "done: sent to ada@example.com"
    assert [(e["type"], e.get("tool")) for e in events if e["type"] != "text"] == [
        ("tool_started", "lookup"), ("tool_finished", "lookup"), ("tool_started", "send"),
        ("interrupt", None), ("finished", None),  # the Confirm: waiting for the inbox
        ("tool_started", "send"), ("tool_finished", "send"), ("finished", None),
    ]  # fmt: skip
    assert "ada@example.com" not in str([e for e in events if e["type"] != "text"])
    assert sent(out) == [f"{wid} ada@example.com hi"]
    decided = await store.approvals.get(row.id)
    assert (decided.status, decided.decided_by) == ("approved", "ops@example.com")
    record = await store.load(wid)
    assert record is not None
    assert record.status == "completed"
    report = await store.audit.verify()
    assert report.ok, report


async def test_a_denial_from_code_ends_with_the_tool_denied(
    temporal_client: Any, store: SQLiteStore, out: Path
) -> None:
    from temporalio.worker import Worker

    queue, wid = queue_name(), f"wf-{uuid.uuid4().hex[:8]}"
    async with Worker(
        temporal_client, task_queue=queue, plugins=[TetherPlugin(app=APP, store=store)]
    ):
        handle = await start(temporal_client, queue, wid)
        (pending,) = (await waiting(handle))["interrupts"]
        answer = {pending["id"]: {"approved": False, "reason": "not today"}}
        outcome = await handle.execute_update(ANSWER_UPDATE, args=[answer, "code@test"])
        result = await handle.result()
    assert outcome["stop_reason"] == result["stop_reason"] == "end_turn"
    assert "not today" in result["text"]
    assert sent(out) == []
    (row,) = await store.approvals.find(session_id=wid)
    assert (row.status, row.decided_by) == ("denied", "code@test")


async def test_an_edited_argument_runs_exactly_as_edited(
    temporal_client: Any, store: SQLiteStore, out: Path
) -> None:
    from temporalio.worker import Worker

    queue, wid = queue_name(), f"wf-{uuid.uuid4().hex[:8]}"
    async with Worker(
        temporal_client, task_queue=queue, plugins=[TetherPlugin(app=APP, store=store)]
    ):
        handle = await start(temporal_client, queue, wid)
        (pending,) = (await waiting(handle))["interrupts"]
        answer = {
            pending["id"]: {
                "approved": True,
                "args": {"to": "ada@example.com", "text": "hello, edited"},
            }
        }
        await handle.execute_update(ANSWER_UPDATE, args=[answer, None])
        result = await handle.result()
    assert result["stop_reason"] == "end_turn"
    assert sent(out) == [f"{wid} ada@example.com hello, edited"]


async def test_an_invalid_answer_rejects_the_update_with_its_reason_and_changes_nothing(
    temporal_client: Any, store: SQLiteStore, out: Path
) -> None:
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.worker import Worker

    queue, wid = queue_name(), f"wf-{uuid.uuid4().hex[:8]}"
    async with Worker(
        temporal_client, task_queue=queue, plugins=[TetherPlugin(app=APP, store=store)]
    ):
        handle = await start(temporal_client, queue, wid)
        (pending,) = (await waiting(handle))["interrupts"]
        with pytest.raises(WorkflowUpdateFailedError) as unknown:
            await handle.execute_update(ANSWER_UPDATE, args=[{"nope": True}, None])
        assert f"no pending interrupt nope; pending: {pending['id']}" in str(unknown.value.cause)
        bad_edit = {
            pending["id"]: {"approved": True, "args": {"to": "ada@example.com", "text": 42}}
        }
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(ANSWER_UPDATE, args=[bad_edit, None])
        assert "text" in str(refused.value.cause)
        assert sent(out) == []
        (row,) = await store.approvals.find(session_id=wid)
        assert row.status == "pending"  # nothing recorded
        await handle.execute_update(ANSWER_UPDATE, args=[{pending["id"]: True}, None])
        result = await handle.result()
    assert result["stop_reason"] == "end_turn"
    assert sent(out) == [f"{wid} ada@example.com hi"]


async def test_every_history_replays_without_a_nondeterminism_error(
    temporal_client: Any, store: SQLiteStore, out: Path
) -> None:
    from temporalio.worker import Replayer, Worker

    queue = queue_name()
    ids = [f"wf-replay-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    async with Worker(
        temporal_client, task_queue=queue, plugins=[TetherPlugin(app=APP, store=store)]
    ):
        for i, wid in enumerate(ids):
            handle = await start(temporal_client, queue, wid)
            (pending,) = (await waiting(handle))["interrupts"]
            await handle.execute_update(ANSWER_UPDATE, args=[{pending["id"]: i == 0}, None])
            await handle.result()
    plugin = TetherPlugin(app=APP, store=store)
    replayer = Replayer(workflows=[], plugins=[plugin])
    for wid in ids:
        history = await temporal_client.get_workflow_handle(wid).fetch_history()
        await replayer.replay_workflow(history)


async def test_a_run_that_fails_ends_the_workflow_failed_with_a_redacted_reason(
    temporal_client: Any, store: SQLiteStore
) -> None:
    """A provider that fails for good ends the run with stop reason error; the workflow
    fails once (not a workflow task retried forever), its reason through the redaction."""
    from temporal_secret_app import SECRET
    from temporalio.client import WorkflowFailureError
    from temporalio.worker import Worker

    queue, wid = queue_name(), f"wf-fail-{uuid.uuid4().hex[:8]}"
    plugin = TetherPlugin(app="temporal_secret_app:agent_factory", store=store)
    async with Worker(temporal_client, task_queue=queue, plugins=[plugin]):
        handle = await start(temporal_client, queue, wid)
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 60)
    cause = failed.value.cause
    assert "failed" in str(cause)
    assert SECRET not in str(cause)
    history = await handle.fetch_history()
    assert SECRET not in str(history.to_json())
    record = await store.load(wid)
    assert record is not None
    assert record.status == "failed"
