"""CancelTask: tether's cooperative cancel; a canceled task cannot be continued."""

from __future__ import annotations

import asyncio
import time

import pytest
from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, SubscribeToTaskRequest, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError
from a2a_serve import Served, answer_message, client, send, text_message, waiting

from tether.durable import SQLiteStore


async def test_a_running_task_is_canceled_cooperatively(server: Served):
    request = text_message("sleep")
    request.configuration.return_immediately = True
    async with client(server.url, server.tokens["caller"]) as a2a:
        [first] = await send(a2a, request)
        assert first.task.status.state in (
            TaskState.TASK_STATE_SUBMITTED,
            TaskState.TASK_STATE_WORKING,
        )
        started = time.monotonic()
        canceled = await a2a.cancel_task(CancelTaskRequest(id=first.task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert time.monotonic() - started < 10  # the 30 s nap was cut short
        with pytest.raises(InvalidParamsError, match="cancelled: it cannot be continued"):
            await send(a2a, text_message("more", task_id=first.task.id))
        with pytest.raises(TaskNotCancelableError):
            await a2a.cancel_task(CancelTaskRequest(id=first.task.id))
        again = await a2a.get_task(GetTaskRequest(id=first.task.id))
    assert again.status.state == TaskState.TASK_STATE_CANCELED


async def test_a_waiting_task_is_canceled_and_its_approval_closed(server: Served):
    task, it = await waiting(server, "append canceled-line")
    async with client(server.url, server.tokens["caller"]) as a2a:
        canceled = await a2a.cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    async with client(server.url, server.tokens["approver"]) as a2a:
        with pytest.raises(InvalidParamsError, match="cannot be continued"):
            await send(a2a, answer_message(task.id, {it["id"]: True}))
    store = SQLiteStore(server.db)
    try:
        [row] = await store.approvals.find(session_id=task.id)
    finally:
        await store.close()
    assert row.status == "denied"
    await asyncio.sleep(1.5)  # the served-runs loop looks again: nothing runs
    assert "canceled-line" not in server.lines()


async def test_only_the_caller_or_an_admin_cancels(server: Served):
    task, _ = await waiting(server, "append not-theirs")
    async with client(server.url, server.tokens["approver"]) as a2a:
        with pytest.raises(Exception, match="HTTP Error 403"):
            await a2a.cancel_task(CancelTaskRequest(id=task.id))
        again = await a2a.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED


async def test_a_subscriber_of_a_running_task_sees_its_cancel(server: Served):
    request = text_message("sleep")
    request.configuration.return_immediately = True
    async with client(server.url, server.tokens["caller"]) as a2a:
        [first] = await send(a2a, request)
    task_id = first.task.id
    async with client(server.url, server.tokens["caller"], streaming=True) as a2a:
        events = a2a.subscribe(SubscribeToTaskRequest(id=task_id))
        opening = await anext(events)
        assert opening.task.id == task_id
        async with client(server.url, server.tokens["caller"]) as other:
            await other.cancel_task(CancelTaskRequest(id=task_id))
        states = [e.status_update.status.state async for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_CANCELED
