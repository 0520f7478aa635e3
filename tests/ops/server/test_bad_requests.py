"""Bad input is a 4xx naming the problem, never a 500: strict JSON bodies, unreadable journals."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from live_server import call, live_server, seed

from tether.durable import SQLiteStore
from tether.ops.server import create_app

BAD_NUMBERS = {
    "NaN": b'{"decision": "approve", "edited_args": {"amount": NaN}}',
    "Infinity": b'{"decision": "approve", "edited_args": {"amount": Infinity}}',
    "-Infinity": b'{"decision": "approve", "edited_args": {"amount": -Infinity}}',
    "1e400": b'{"decision": "approve", "edited_args": {"amount": 1e400}}',
}


def _decision(seeded) -> str:
    return f"{seeded.url}/api/approvals/{seeded.approval_id}/decision"


def _still_pending(seeded) -> None:
    url = f"{seeded.url}/api/approvals/{seeded.approval_id}"
    status, shown = call("GET", url, seeded.tokens["alice"])
    assert status == 200
    assert shown["status"] == "pending"


@pytest.mark.parametrize("depth", [40, 30_000])
def test_deeply_nested_bodies_are_400_not_500(seeded_server, depth):
    nested = b"[" * depth + b"]" * depth
    body = b'{"decision": "approve", "edited_args": {"to": ' + nested + b"}}"
    status, answer = call("POST", _decision(seeded_server), seeded_server.tokens["alice"], body)
    assert status == 400
    assert "nested too deeply" in answer["error"]
    assert "32 levels" in answer["error"]
    _still_pending(seeded_server)


@pytest.mark.parametrize("name", BAD_NUMBERS)
def test_nan_and_infinity_are_400_naming_the_number(seeded_server, name):
    body = BAD_NUMBERS[name]
    status, answer = call("POST", _decision(seeded_server), seeded_server.tokens["alice"], body)
    assert status == 400
    assert "not valid JSON" in answer["error"]
    assert name.lstrip("-") in answer["error"]
    _still_pending(seeded_server)


async def test_an_unreadable_journal_is_one_422_whatever_the_cause(tmp_path):
    path = tmp_path / "corrupt.db"
    store = SQLiteStore(path)
    tokens, _ = await seed(store)
    await store.create("odd-1")
    await store.append("odd-1", 0, [("message", {"bogus": 1})])  # JSON, but not a message
    with sqlite3.connect(path) as conn:  # a row that is not JSON at all
        conn.execute("UPDATE entries SET data = '{not json' WHERE session_id = 'pay-1' AND seq = 2")
    with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
        for session, entry in (("pay-1", 2), ("odd-1", None)):
            status, body = await asyncio.to_thread(
                call, "GET", f"{url}/api/sessions/{session}", tokens["viewer"]
            )
            assert status == 422, body
            assert body["error"].startswith(
                f"session '{session}' has a journal entry tether cannot read: "
            )
            assert "cannot be shown or resumed" in body["error"]
            assert (body["session_id"], body["entry"]) == (session, entry)
        status, body = await asyncio.to_thread(
            call, "GET", f"{url}/api/sessions/del-1", tokens["viewer"]
        )
        assert status == 200  # the other sessions are still shown
    await store.close()


@pytest.mark.parametrize(
    "body",
    [
        b'{"decision": "deny", "decision": "approve"}',
        b'{"decision": "approve", "edited_args": {"amount": 5, "amount": 5000}}',
    ],
)
def test_duplicate_keys_are_400_and_decide_nothing(seeded_server, body):
    status, answer = call("POST", _decision(seeded_server), seeded_server.tokens["alice"], body)
    assert status == 400
    assert "appears more than once" in answer["error"]
    assert "'decision'" in answer["error"] or "'amount'" in answer["error"]
    _still_pending(seeded_server)
