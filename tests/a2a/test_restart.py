"""SIGKILL the server while a task waits in input-required; the next server carries on."""

from __future__ import annotations

import asyncio
import signal

from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, TaskState
from a2a_serve import (
    add_tokens,
    answer_message,
    client,
    interrupts_of,
    send,
    start_server,
    stop,
    text_message,
)


async def test_a_waiting_task_survives_a_sigkill_and_completes_once(tmp_path):
    db, out = tmp_path / "a2a.db", tmp_path / "out.txt"
    tokens = await add_tokens(db)
    first = start_server(db, out)
    try:
        async with client(first.url, tokens["caller"]) as a2a:  # type: ignore[attr-defined]
            [final] = await send(a2a, text_message("append after-restart"))
        assert final.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        [it] = interrupts_of(final.task)
    finally:
        stop(first, signal.SIGKILL)
    assert first.returncode == -signal.SIGKILL
    second = start_server(db, out)
    try:
        url = second.url  # type: ignore[attr-defined]
        async with client(url, tokens["caller"]) as a2a:
            listed = await a2a.list_tasks(ListTasksRequest())
            [again] = [t for t in listed.tasks if t.id == final.task.id]
            assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert interrupts_of(again) == [it]
        async with client(url, tokens["approver"]) as a2a:
            [done] = await send(a2a, answer_message(final.task.id, {it["id"]: True}))
        assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
        await asyncio.sleep(1)  # the served-runs loop finds nothing more to run
    finally:
        stop(second)
    assert out.read_text().splitlines() == ["after-restart"]


async def test_a_task_running_at_shutdown_is_paused_and_its_caller_continues_it(tmp_path):
    db, out = tmp_path / "a2a.db", tmp_path / "out.txt"
    tokens = await add_tokens(db)
    first = start_server(db, out)
    try:
        request = text_message("sleep 2")
        request.configuration.return_immediately = True
        async with client(first.url, tokens["caller"]) as a2a:  # type: ignore[attr-defined]
            [started] = await send(a2a, request)
        await asyncio.sleep(0.5)  # the nap is under way
    finally:
        stop(first)  # SIGINT: a graceful stop pauses the running task
    assert first.returncode == 0
    second = start_server(db, out)
    try:
        url = second.url  # type: ignore[attr-defined]
        async with client(url, tokens["caller"]) as a2a:
            paused = await a2a.get_task(GetTaskRequest(id=started.task.id))
            assert paused.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert interrupts_of(paused) == []
            assert "paused" in paused.status.message.parts[0].text
            [done] = await send(a2a, text_message("go on", task_id=started.task.id))
        assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert done.task.artifacts[-1].parts[0].text == "done: rested"
    finally:
        stop(second)
