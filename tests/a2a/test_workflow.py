"""A2A serves a workflow: ``tether serve --app workflow_app:workflow_factory`` (a factory
returning a workflow). A message starts it; the legal branch's Confirm comes back as
``input-required`` with its address; an answer by message finishes the workflow."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a_serve import (
    SUPPORT,
    TETHER,
    add_tokens,
    answer_message,
    client,
    free_port,
    interrupts_of,
    rpc,
    send,
    stop,
    text_message,
)
from live_server import call, live_server
from workflow_app import ADDRESS

from tether.durable import SQLiteStore
from tether.ops.app_loader import load_factory
from tether.ops.server import create_app


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("a2a-workflow")
    db, out = tmp / "a2a.db", tmp / "out.txt"
    tokens = asyncio.run(add_tokens(db))
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, os.environ.get("PYTHONPATH")])),
        "TETHER_WORKFLOW_STORE": str(db),
        "TETHER_WORKFLOW_OUT": str(out),
    }
    args = [TETHER, "serve", "--store", str(db), "--port", str(port)]
    proc = subprocess.Popen(
        [*args, "--app", "workflow_app:workflow_factory"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            call("GET", url + "/.well-known/agent-card.json", timeout=5)
            break
        except OSError:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else "server died"
            import time

            time.sleep(0.1)
    try:
        yield url, out, tokens
    finally:
        stop(proc)


async def test_a_workflow_task_asks_for_the_branchs_approval_and_completes_by_message(
    served: tuple[str, Path, dict[str, str]],
) -> None:
    url, out, tokens = served
    async with client(url, tokens["caller"]) as a2a:
        [first] = await send(a2a, text_message("the plan"))
    task = first.task
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, first
    [interrupt] = interrupts_of(task)
    assert interrupt["name"] == ADDRESS  # the branch's Confirm, with its address
    assert interrupt["path"] == ["review#2", "legal#1"]
    assert interrupt["tool"] == "write"
    assert interrupt["arguments"] == {"text": "legal"}
    assert not out.exists()  # nothing ran
    async with client(url, tokens["admin"]) as a2a:
        [final] = await send(a2a, answer_message(task.id, {interrupt["id"]: True}))
    assert final.task.status.state == TaskState.TASK_STATE_COMPLETED, final
    text = final.task.artifacts[-1].parts[0].text
    assert text.startswith('summary: ["legal wrote (ok legal)", "tech: ')  # the workflow's text
    assert out.read_text().splitlines() == [f"{task.id} legal"]


async def test_a_factory_of_neither_leaves_no_task(tmp_path: Path) -> None:
    db = tmp_path / "a2a.db"
    tokens = await add_tokens(db)
    app = create_app(
        SQLiteStore(db), app_factory=load_factory("workflow_app:returns_a_string"), close_store=True
    )
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "the plan"}]}
    body = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": message}}
    with live_server(app) as url:
        status, card = await asyncio.to_thread(call, "GET", url + "/.well-known/agent-card.json")
        assert status == 503, card
        assert "the agent could not be built; the server log says why" in str(card)
        status, answer = await asyncio.to_thread(rpc, url, tokens["caller"], body)
    assert status == 200, answer
    assert "the agent could not be built; the server log says why" in answer["error"]["message"]
    store = SQLiteStore(db)
    try:
        assert await store.list_sessions() == []  # nothing created
    finally:
        await store.close()
