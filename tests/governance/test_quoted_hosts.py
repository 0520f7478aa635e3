"""The protocol hosts serving the quoting workflow (tests/support/quoting_tree.py) show
the card nowhere: AG-UI's events (node calls' args, the interrupt's arguments and
message) and A2A's task (history, artifacts, the interrupt's data part), while the memo
(not hidden) still shows; AG-UI shows a node's interrupt by the node agent's own policy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a_serve import client, interrupts_of, send, text_message
from ag_ui_app import post_run, run_input, user
from google.protobuf.json_format import MessageToDict
from live_server import live_server
from quoting_tree import CARD, PLAIN

from tether.durable import SQLiteStore
from tether.ops.app_loader import load_factory
from tether.ops.server import create_app


async def _token(db: Path) -> str:
    store = SQLiteStore(db)
    try:
        return (await store.approvers.add("caller", ["invoke", "viewer"])).token
    finally:
        await store.close()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    db = tmp_path / "hosts.db"
    monkeypatch.setenv("QUOTING_DB", str(db))
    return db, asyncio.run(_token(db))


def test_ag_ui_events_scrub_the_quoted_secret(served: tuple[Path, str]) -> None:
    db, token = served
    app = create_app(
        SQLiteStore(db), app_factory=load_factory("quoting_tree:served_flow"), close_store=True
    )
    with live_server(app) as url:
        status, events = post_run(url, token, run_input("q-thread", "r1", [user("go")]))
    assert status == 200, events
    text = json.dumps([e.model_dump(mode="json") for e in events])
    assert events[-1].outcome.type == "interrupt"
    assert CARD not in text
    assert PLAIN in text
    [pending] = events[-1].outcome.interrupts
    assert pending.metadata["tether"]["arguments"] == {"text": f"paid: charged *** for {PLAIN}"}


async def test_a2a_task_scrubs_the_quoted_secret(served: tuple[Path, str]) -> None:
    db, token = served
    app = create_app(
        SQLiteStore(db), app_factory=load_factory("quoting_tree:served_flow"), close_store=True
    )
    with live_server(app) as url:
        async with client(url, token) as a2a:
            [final] = await send(a2a, text_message("go"))
    task = final.task
    assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, final
    text = json.dumps(MessageToDict(task))
    assert CARD not in text
    [interrupt] = interrupts_of(task)
    assert PLAIN in json.dumps(interrupt)


def test_ag_ui_shows_a_node_interrupt_by_the_node_agents_own_redactor(
    served: tuple[Path, str],
) -> None:
    """The workflow has no redactor; pay's own policy hides ``card`` (as its row is filed)."""
    db, token = served
    app = create_app(
        SQLiteStore(db),
        app_factory=load_factory("quoting_tree:served_inner_flow"),
        close_store=True,
    )
    with live_server(app) as url:
        status, events = post_run(url, token, run_input("inner-thread", "r1", [user("go")]))
    assert status == 200, events
    [pending] = events[-1].outcome.interrupts
    # the cvv is too short to be a hidden string: only the node agent's redactor masks it
    assert pending.metadata["tether"]["arguments"] == {"card": "***", "memo": PLAIN, "cvv": "***"}
    assert CARD not in json.dumps(pending.model_dump(mode="json"))
