"""Bad JSON-RPC gets a clear protocol error, and the waiting task loses nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, TaskState
from a2a_serve import Served, client, interrupts_of, rpc, waiting

from tether.ops.server.request_input import MAX_BODY


def _send(task_id: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    message = {"messageId": "m1", "role": "ROLE_USER", "taskId": task_id, "parts": parts}
    return {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}


@pytest.fixture(scope="module")
def pending(server: Served) -> tuple[Any, dict[str, Any]]:
    return asyncio.run(waiting(server, "append kept-waiting"))


async def _still_waiting(server: Served, task: Any, it: dict[str, Any]) -> None:
    async with client(server.url, server.tokens["caller"]) as a2a:
        again = await a2a.get_task(GetTaskRequest(id=task.id))
    assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert interrupts_of(again) == [it]
    assert "kept-waiting" not in server.lines()


@pytest.mark.parametrize(
    ("raw", "code", "words"),
    [
        (b"{not json", -32700, ""),
        (b"[]", -32600, ""),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', -32600, "2.0"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "DeleteEverything"}', -32601, ""),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": 5}', -32600, ""),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}',
            -32001,
            "nope",
        ),
    ],
)
async def test_malformed_requests_are_protocol_errors(server: Served, pending, raw, code, words):
    status, body = rpc(server.url, server.tokens["caller"], None, raw=raw)
    assert status == 200
    assert body["error"]["code"] == code, body
    assert words in body["error"]["message"]
    await _still_waiting(server, *pending)


async def test_a_huge_body_is_refused_by_the_inbox_cap(server: Served, pending):
    task, it = pending
    huge = _send(task.id, [{"text": "x" * (MAX_BODY + 1)}])
    status, body = rpc(server.url, server.tokens["admin"], huge)
    assert status == 413
    assert str(MAX_BODY) in body["error"]
    await _still_waiting(server, task, it)


async def test_answers_that_are_not_an_id_map_are_refused(server: Served, pending):
    task, it = pending
    for parts in ([{"data": [1, 2]}], [{"data": "yes"}]):
        status, body = rpc(server.url, server.tokens["admin"], _send(task.id, parts))
        assert status == 200
        assert body["error"]["code"] == -32602, body
        assert "interrupt id" in body["error"]["message"]
    await _still_waiting(server, task, it)


async def test_an_unknown_task_and_a_token_of_no_role_here(server: Served, pending):
    status, body = rpc(server.url, server.tokens["admin"], _send("a2a-missing", [{"text": "x"}]))
    assert body["error"]["code"] == -32001
    assert "a2a-missing" in body["error"]["message"]
    status, body = rpc(server.url, server.tokens["nobody"], _send(pending[0].id, [{"text": "x"}]))
    assert status == 403
    assert "invoke" in body["error"]
    await _still_waiting(server, *pending)


async def test_a_reader_cannot_start_a_task(server: Served):
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    status, answer = rpc(server.url, server.tokens["viewer"], body)
    assert status == 403
    assert "invoke or admin" in answer["error"]


@pytest.mark.parametrize(
    ("method", "params", "words"),
    [
        ("CreateTaskPushNotificationConfig", {"taskId": "t", "url": "http://x"}, "not supported"),
        ("ListTaskPushNotificationConfigs", {"taskId": "t"}, "not supported"),
        ("GetExtendedAgentCard", {}, "not configured"),
        ("SubscribeToTask", {"id": "a2a-missing"}, "a2a-missing"),
        ("CancelTask", {"id": "a2a-missing"}, "a2a-missing"),
    ],
)
def test_methods_not_offered_and_unknown_tasks_say_so(server: Served, method, params, words):
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}
    status, answer = rpc(server.url, server.tokens["admin"], body)
    assert status == 200
    assert words in answer["error"]["message"].lower() or words in str(answer).lower(), answer
