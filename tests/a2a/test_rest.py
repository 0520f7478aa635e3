"""The HTTP+JSON binding (the SDK's REST routes over the same handler and tokens)."""

from __future__ import annotations

import pytest
from a2a.client.errors import A2AClientError
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a_serve import Served, answer_message, client, interrupts_of, send, text_message
from live_server import call


async def test_a_task_over_http_json_waits_is_answered_and_completes(server: Served):
    async with client(server.url, server.tokens["caller"], binding="HTTP+JSON") as a2a:
        [first] = await send(a2a, text_message("append over-rest"))
        assert first.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        [it] = interrupts_of(first.task)
        with pytest.raises(A2AClientError, match="403"):  # the caller cannot approve it
            await send(a2a, answer_message(first.task.id, {it["id"]: True}))
    async with client(server.url, server.tokens["approver"], binding="HTTP+JSON") as a2a:
        [done] = await send(a2a, answer_message(first.task.id, {it["id"]: True}))
        assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
        again = await a2a.get_task(GetTaskRequest(id=first.task.id))
    assert again.artifacts[-1].parts[0].text == "done: appended over-rest"
    assert server.lines().count("over-rest") == 1
    status, _ = call("GET", f"{server.url}/a2a/rest/tasks/{first.task.id}")
    assert status == 401
