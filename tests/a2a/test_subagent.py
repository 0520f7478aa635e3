"""A sub-agent's interrupt reaches the task with its path, and its answer goes back down."""

from __future__ import annotations

from a2a.types.a2a_pb2 import TaskState
from a2a_serve import Served, answer_message, client, send, waiting


async def test_a_deep_interrupt_carries_its_path_and_is_answered_by_message(server: Served):
    task, it = await waiting(server, "delegate deep-line")
    assert it["path"] == ["helper#d1"]
    assert it["name"].startswith("helper#d1/")
    assert it["tool"] == "append_line"
    assert it["arguments"] == {"text": "deep-line"}
    async with client(server.url, server.tokens["approver"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: True}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "helper done" in final.task.artifacts[-1].parts[0].text
    assert server.lines().count("deep-line") == 1
