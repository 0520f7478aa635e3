"""input-required, and answering by message: who may answer what, exactly once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a.utils.errors import A2AError, InvalidParamsError
from a2a_serve import (
    Served,
    answer_message,
    client,
    interrupts_of,
    rpc,
    send,
    text_message,
    waiting,
)

from tether.durable import SQLiteStore


async def test_an_approval_waits_with_its_interrupt_as_a_data_part(server: Served):
    _task, it = await waiting(server, "append part")
    assert it["type"] == "tether.interrupt"
    assert it["id"].startswith("int_")
    assert it["tool"] == "append_line"
    assert it["arguments"] == {"text": "part"}
    assert it["reason"] == "append 'part'?"
    assert it["source"] == "intervention"
    assert it["answered_by"] == "approver"
    assert it["path"] == []
    assert it["expires_at"] > 0
    assert {"type": "boolean"} in it["answer_schema"]["oneOf"]
    assert "part" not in server.lines()  # nothing ran


async def test_the_arguments_shown_are_redacted(server: Served):
    _, it = await waiting(server, "secret")
    assert it["arguments"]["api_key"] != "sk-live-0123456789abcdef0123"
    assert "sk-live" not in str(it)


async def test_an_approver_answers_by_message_and_the_tool_runs_once(server: Served):
    task, it = await waiting(server, "append approved-once")
    async with client(server.url, server.tokens["approver"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: True}))
        assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert final.task.artifacts[-1].parts[0].text == "done: appended approved-once"
        with pytest.raises(InvalidParamsError, match="cannot be continued"):
            await send(a2a, answer_message(task.id, {it["id"]: True}))
    assert server.lines().count("approved-once") == 1
    store = SQLiteStore(server.db)
    try:
        [row] = await store.approvals.find(session_id=task.id)
    finally:
        await store.close()
    assert (row.status, row.decided_by) == ("approved", "approver")  # the one decision path


async def test_an_edited_answer_runs_the_edited_call(server: Served):
    task, it = await waiting(server, "append original")
    answer = {"approved": True, "args": {**it["arguments"], "text": "edited"}}
    async with client(server.url, server.tokens["admin"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: answer}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "edited" in server.lines()
    assert "original" not in server.lines()


async def test_a_denial_completes_without_running_the_tool(server: Served):
    task, it = await waiting(server, "append denied-line")
    async with client(server.url, server.tokens["approver"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: False}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert "denied-line" not in server.lines()


async def test_the_invoke_token_of_the_caller_cannot_approve_its_own_tool_call(server: Served):
    task, it = await waiting(server, "append self-approved")
    async with client(server.url, server.tokens["caller"]) as a2a:
        with pytest.raises(A2AClientError, match="HTTP Error 403"):
            await send(a2a, answer_message(task.id, {it["id"]: True}))
        again = await a2a.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # nothing was lost
    assert "self-approved" not in server.lines()
    status, body = rpc(server.url, server.tokens["caller"], _rpc(task.id, {it["id"]: True}))
    assert status == 403
    assert "approve:append_line" in body["error"]


async def test_no_token_is_401_and_a_token_of_no_role_here_is_403(server: Served):
    task, it = await waiting(server, "append unauthorized")
    status, _ = rpc(server.url, None, _rpc(task.id, {it["id"]: True}))
    assert status == 401
    status, _ = rpc(server.url, "tether_bogus_token", _rpc(task.id, {}))
    assert status == 401
    async with client(server.url, None) as a2a:
        with pytest.raises(A2AClientError, match="HTTP Error 401"):
            await a2a.get_task(GetTaskRequest(id=task.id))
    assert "unauthorized" not in server.lines()


async def test_a_question_is_answered_by_the_tasks_own_caller(server: Served):
    task, it = await waiting(server, "ask")
    assert it["name"] == "clarify"
    assert it["reason"] == "which colour?"
    assert it["answered_by"] == "caller"
    assert it["answer_schema"] == {"type": "string"}
    async with client(server.url, server.tokens["other"]) as a2a:  # not its caller
        with pytest.raises(A2AError, match="not yours"):
            await send(a2a, answer_message(task.id, {it["id"]: "red"}))
    async with client(server.url, server.tokens["caller"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {it["id"]: "blue"}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert final.task.artifacts[-1].parts[0].text == "done: blue"


async def test_an_unknown_interrupt_id_is_an_error_naming_it_and_nothing_runs(server: Served):
    task, it = await waiting(server, "append never-unknown")
    async with client(server.url, server.tokens["approver"]) as a2a:
        with pytest.raises(InvalidParamsError, match="int_nope"):
            await send(a2a, answer_message(task.id, {"int_nope": True}))
        with pytest.raises(InvalidParamsError, match="int_nope"):  # one bad id spoils all
            await send(a2a, answer_message(task.id, {it["id"]: True, "int_nope": True}))
        with pytest.raises(InvalidParamsError, match="data part"):
            await send(a2a, text_message("yes", task_id=task.id))
        again = await a2a.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert interrupts_of(again) == [it]
    assert "never-unknown" not in server.lines()


async def test_two_answers_at_once_one_wins_and_the_tool_runs_once(server: Served):
    task, it = await waiting(server, "append raced")

    async def answer(token: str) -> Any:
        async with client(server.url, server.tokens[token]) as a2a:
            try:
                return await send(a2a, answer_message(task.id, {it["id"]: True}))
            except InvalidParamsError as exc:
                return exc

    results = await asyncio.gather(answer("approver"), answer("admin"))
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1, results
    assert server.lines().count("raced") == 1


def _rpc(task_id: str, answers: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": "m1",
                "role": "ROLE_USER",
                "taskId": task_id,
                "parts": [{"data": answers}],
            }
        },
    }


async def test_a_secret_the_masks_hid_is_scrubbed_from_the_texts_sent(server: Served):
    task, it = await waiting(server, "secret")
    async with client(server.url, server.tokens["approver"], streaming=True) as a2a:
        events = await send(a2a, answer_message(task.id, {it["id"]: True}))
        final = await a2a.get_task(GetTaskRequest(id=task.id))
    assert final.status.state == TaskState.TASK_STATE_COMPLETED
    assert final.artifacts[-1].parts[0].text.startswith("done with ")
    streamed = [
        e.artifact_update.artifact.parts[0].text for e in events if e.HasField("artifact_update")
    ]
    assert streamed == [final.artifacts[-1].parts[0].text]
    assert "sk-live" not in str(final)
    assert "sk-live" not in str(events)


async def test_a_streamed_run_ends_input_required_with_the_interrupts(server: Served):
    async with client(server.url, server.tokens["caller"], streaming=True) as a2a:
        events = await send(a2a, text_message("append streamed-wait"))
    last = events[-1].status_update
    assert last.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    [it] = interrupts_of(last)
    assert it["tool"] == "append_line"
    assert it["arguments"] == {"text": "streamed-wait"}
