"""An operator answers a served task's approval in the inbox: the task moves on."""

from __future__ import annotations

import asyncio
import time

import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, SubscribeToTaskRequest, TaskState
from a2a.utils.errors import InvalidParamsError
from a2a_serve import Served, answer_message, client, send, waiting
from live_server import call
from ops_cli import cli


def decide(server: Served, approval_id: str, decision: str, token: str = "approver") -> int:
    url = f"{server.url}/api/approvals/{approval_id}/decision"
    status, _ = call("POST", url, server.tokens[token], {"decision": decision})
    return status


async def test_an_inbox_approval_resumes_the_task_and_get_task_shows_it(server: Served):
    task, it = await waiting(server, "append from-inbox")
    assert decide(server, it["approval_id"], "approve") == 200
    async with client(server.url, server.tokens["caller"]) as a2a:
        deadline = time.monotonic() + 20
        while True:
            now = await a2a.get_task(GetTaskRequest(id=task.id))
            if now.status.state == TaskState.TASK_STATE_COMPLETED:
                break
            assert time.monotonic() < deadline, now
            await asyncio.sleep(0.2)
        assert now.artifacts[-1].parts[0].text == "done: appended from-inbox"
        # the inbox decided first: the caller's later answer is refused, nothing reruns
        with pytest.raises(InvalidParamsError, match="cannot be continued"):
            await send(a2a, answer_message(task.id, {it["id"]: True}))
    assert server.lines().count("from-inbox") == 1


async def test_a_subscriber_sees_the_task_move_on_after_an_inbox_denial(server: Served):
    task, it = await waiting(server, "append subscribed")
    async with client(server.url, server.tokens["caller"], streaming=True) as a2a:
        events = a2a.subscribe(SubscribeToTaskRequest(id=task.id))
        first = await anext(events)
        assert first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert decide(server, it["approval_id"], "deny") == 200
        states = []
        async for event in events:
            if event.HasField("status_update"):
                states.append(event.status_update.status.state)
        assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert "subscribed" not in server.lines()


async def test_an_inbox_answer_after_the_callers_is_refused(server: Served):
    task, it = await waiting(server, "append caller-first")
    async with client(server.url, server.tokens["approver"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: True}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert decide(server, it["approval_id"], "deny", token="admin") == 409
    assert server.lines().count("caller-first") == 1


async def test_an_approval_from_the_cli_resumes_the_task_too(server: Served):
    task, it = await waiting(server, "append from-cli")
    approved = await asyncio.to_thread(
        cli, "approvals", "approve", it["approval_id"], "--as", "oncall", "--store", str(server.db)
    )
    assert approved.exit_code == 0, approved.output
    async with client(server.url, server.tokens["caller"]) as a2a:
        deadline = time.monotonic() + 20
        while (now := await a2a.get_task(GetTaskRequest(id=task.id))).status.state != (
            TaskState.TASK_STATE_COMPLETED
        ):
            assert time.monotonic() < deadline, now
            await asyncio.sleep(0.2)
    assert server.lines().count("from-cli") == 1
