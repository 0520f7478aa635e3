"""Send, stream, get and list over the a2a-sdk client: each task is one durable session."""

from __future__ import annotations

import asyncio

import pytest
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, Role, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from a2a_serve import Served, client, send, text_message
from google.protobuf.json_format import MessageToDict

from tether.a2a import META_KEY
from tether.durable import SQLiteStore


async def _metadata(server: Served, task_id: str) -> dict:
    store = SQLiteStore(server.db)
    try:
        record = await store.load(task_id)
        assert record is not None
        return record.metadata
    finally:
        await store.close()


async def test_a_message_runs_a_task_that_is_a_session(server: Served):
    async with client(server.url, server.tokens["caller"]) as a2a:
        [final] = await send(a2a, text_message("hello there", context_id="ctx-1"))
        task = final.task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert task.context_id == "ctx-1"
        assert [(m.role, m.parts[0].text) for m in task.history] == [
            (Role.ROLE_USER, "hello there"),
            (Role.ROLE_AGENT, "hi: hello there"),
        ]
        assert [a.parts[0].text for a in task.artifacts] == ["hi: hello there"]
        again = await a2a.get_task(GetTaskRequest(id=task.id))
        assert MessageToDict(again) == MessageToDict(task)
    meta = await _metadata(server, task.id)  # the task id is the session id
    assert meta[META_KEY] == {"context_id": "ctx-1", "caller": "caller"}


async def test_a_second_message_in_the_context_starts_a_new_task_there(server: Served):
    async with client(server.url, server.tokens["caller"]) as a2a:
        [one] = await send(a2a, text_message("hello one", context_id="ctx-2"))
        [two] = await send(a2a, text_message("hello two", context_id="ctx-2"))
        assert one.task.id != two.task.id
        listed = await a2a.list_tasks(ListTasksRequest(context_id="ctx-2"))
        assert {t.id for t in listed.tasks} == {one.task.id, two.task.id}
        assert all(t.context_id == "ctx-2" for t in listed.tasks)


async def test_streaming_sends_the_task_the_reply_and_the_final_state(server: Served):
    async with client(server.url, server.tokens["caller"], streaming=True) as a2a:
        events = await send(a2a, text_message("hello stream"))
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    assert "artifact_update" in kinds
    reply = next(e.artifact_update for e in events if e.HasField("artifact_update"))
    assert reply.artifact.parts[0].text == "hi: hello stream"
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_callers_see_only_their_own_tasks_and_readers_see_all(server: Served):
    async with client(server.url, server.tokens["caller"]) as a2a:
        [mine] = await send(a2a, text_message("hello mine"))
    async with client(server.url, server.tokens["other"]) as a2a:
        listed = await a2a.list_tasks(ListTasksRequest())
        assert mine.task.id not in {t.id for t in listed.tasks}
        with pytest.raises(TaskNotFoundError, match="not yours"):
            await a2a.get_task(GetTaskRequest(id=mine.task.id))
    async with client(server.url, server.tokens["viewer"]) as a2a:
        listed = await a2a.list_tasks(ListTasksRequest())
        assert mine.task.id in {t.id for t in listed.tasks}


async def test_many_concurrent_tasks_each_complete(server: Served):
    async with client(server.url, server.tokens["caller"]) as a2a:
        finals = await asyncio.gather(*(send(a2a, text_message(f"hello {i}")) for i in range(8)))
    assert {f[-1].task.status.state for f in finals} == {TaskState.TASK_STATE_COMPLETED}
    assert len({f[-1].task.id for f in finals}) == 8


async def test_list_tasks_filters_by_state_and_pages(server: Served):
    async with client(server.url, server.tokens["caller"]) as a2a:
        for i in range(3):
            await send(a2a, text_message(f"hello page {i}", context_id="ctx-pages"))
        await send(a2a, text_message("append paged-wait", context_id="ctx-pages"))
        waiting = await a2a.list_tasks(
            ListTasksRequest(context_id="ctx-pages", status=TaskState.TASK_STATE_INPUT_REQUIRED)
        )
        assert [t.status.state for t in waiting.tasks] == [TaskState.TASK_STATE_INPUT_REQUIRED]
        first = await a2a.list_tasks(ListTasksRequest(context_id="ctx-pages", page_size=3))
        assert (len(first.tasks), first.total_size) == (3, 4)
        assert all(not t.artifacts for t in first.tasks)  # artifacts only when asked for
        rest = await a2a.list_tasks(
            ListTasksRequest(context_id="ctx-pages", page_size=3, page_token=first.next_page_token)
        )
        assert len(rest.tasks) == 1
        assert not rest.next_page_token
        ids = {t.id for t in first.tasks} | {t.id for t in rest.tasks}
        assert len(ids) == 4
        with pytest.raises(InvalidParamsError, match="page_size"):
            await a2a.list_tasks(ListTasksRequest(page_size=1000))
