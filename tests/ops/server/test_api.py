"""The HTTP API on a live server: decisions with edits, conflicts, races, long poll, redaction."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from live_server import ROLES, call, live_server, seed
from ops_agents import SECRET, transfer_agent, validating_agent

from tether.control.interrupts import Interrupt
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.messages import ToolCall
from tether.ops.server import create_app


@pytest.fixture(params=["sqlite", "postgres"])
async def make_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Store]]:
    """New store objects on one database: the test's own, and the server's (closed by it)."""
    mine: list[Store] = []
    if request.param == "sqlite":

        def make() -> Store:
            return SQLiteStore(tmp_path / "api.db")
    else:
        dsn = request.getfixturevalue("pg_dsn")

        def make() -> Store:
            return PostgresStore(dsn, max_size=4)

    def tracked() -> Store:
        mine.append(make())
        return mine[-1]

    yield tracked
    for store in mine:
        await store.close()


def server(store: Store, **options: Any) -> Any:
    return live_server(create_app(store, close_store=True, **options))


async def test_approve_with_edited_arguments_over_http_then_resume(make_store):
    store = make_store()
    tokens, approval_id = await seed(store)
    base = make_store()
    with server(base, app_factory=validating_agent) as url:
        status, listed = await asyncio.to_thread(
            call, "GET", f"{url}/api/approvals?session=pay-1", tokens["alice"]
        )
        assert status == 200
        [shown] = listed["approvals"]
        assert shown["id"] == approval_id
        assert shown["arguments"] == {"to": "bob", "amount": 500, "api_token": "***"}
        assert shown["can_decide"] is True
        assert shown["takes_edits"] is True
        status, session = await asyncio.to_thread(
            call, "GET", f"{url}/api/sessions/pay-1", tokens["viewer"]
        )
        assert status == 200
        assert session["status"] == "suspended"
        assert session["waiting_for"][0]["tool_call"]["arguments"]["api_token"] == "***"
        assert SECRET not in json.dumps(listed) + json.dumps(session)

        decision = f"{url}/api/approvals/{approval_id}/decision"
        bad = {"decision": "approve", "edited_args": {"amount": "lots"}}
        status, body = await asyncio.to_thread(call, "POST", decision, tokens["alice"], bad)
        assert status == 400
        assert "amount" in body["error"]
        status, body = await asyncio.to_thread(
            call, "POST", decision, tokens["alice"], {"decision": "maybe"}
        )
        assert status == 400
        good = {"decision": "approve", "edited_args": {"amount": 5}, "note": "only 5"}
        status, body = await asyncio.to_thread(call, "POST", decision, tokens["alice"], good)
        assert status == 200, body
        assert body["decided_by"] == "alice"
        assert body["decision"] == "approve_edited"
        status, body = await asyncio.to_thread(
            call, "POST", decision, tokens["admin"], {"decision": "deny"}
        )
        assert status == 409
        assert body["decided_by"] == "alice"
        assert "alice" in body["error"]

        status, audit = await asyncio.to_thread(
            call, "GET", f"{url}/api/audit?session=pay-1", tokens["auditor"]
        )
        decided = [r for r in audit["records"] if r["event"] == "approval.decided"]
        assert [r["data"]["decided_by"] for r in decided] == ["alice"]
        assert SECRET not in json.dumps(audit)

        ran: list[dict[str, Any]] = []
        answers = await store.approvals.answers_for("pay-1")
        done = await transfer_agent(make_store(), "pay-1", ran).resume_async(answers)
        assert done.stop_reason == "end_turn"
        assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]
        status, session = await asyncio.to_thread(
            call, "GET", f"{url}/api/sessions/pay-1", tokens["viewer"]
        )
        assert session["status"] == "completed"
        assert session["messages"][-1]["content"][0]["text"] == "done: sent 5 to bob"
        assert SECRET not in json.dumps(session)  # the transcript's tool call is masked too
        status, report = await asyncio.to_thread(
            call, "GET", f"{url}/api/audit/verify", tokens["auditor"]
        )
        assert status == 200
        assert report["ok"] is True
        assert report["checked"] > 5


async def test_edited_arguments_are_refused_without_an_app_factory(tmp_path):
    store = SQLiteStore(tmp_path / "x.db")
    tokens, approval_id = await seed(store)
    with server(SQLiteStore(tmp_path / "x.db")) as url:
        decision = f"{url}/api/approvals/{approval_id}/decision"
        edit = {"decision": "approve", "edited_args": {"amount": 5}}
        status, body = await asyncio.to_thread(call, "POST", decision, tokens["alice"], edit)
        assert status == 400
        assert "--app module:factory" in body["error"]
        assert (await store.approvals.get(approval_id)).status == "pending"
        # a tool interrupt takes no edits at all; a plain approval works without a factory
        [other] = await store.approvals.pending(session_id="del-1")
        status, body = await asyncio.to_thread(
            call,
            "POST",
            f"{url}/api/approvals/{other.id}/decision",
            tokens["deleter"],
            {"decision": "approve"},
        )
        assert status == 200
        assert body["decided_by"] == "deleter"
        assert (await store.load("del-1")).status == "ready"
    await store.close()


async def requests_for_race(store: Store, n: int) -> list[str]:
    ids = []
    for i in range(n):
        await store.create(f"race-{i}")
        call_ = ToolCall(f"c{i}", "transfer", {"to": "x", "amount": i, "api_token": "t"})
        interrupt = Interrupt(
            f"int_{i}", "confirm:Ask", "pay?", "intervention", "before_tool_call", call_
        )
        ids.append((await store.approvals.request(f"race-{i}", interrupt)).id)
    return ids


async def test_two_concurrent_decisions_exactly_one_wins(make_store):
    store = make_store()
    for name in ("alice", "carol"):
        await store.approvers.add(name, ROLES[name])
    tokens = {
        name: (await store.approvers.add(name + "2", ROLES[name])).token
        for name in ("alice", "carol")
    }
    ids = await requests_for_race(store, 10)
    with server(make_store()) as url, ThreadPoolExecutor(2) as pool:
        for approval_id in ids:
            gate = threading.Barrier(2)

            def post(
                name: str, approval_id: str = approval_id, gate: threading.Barrier = gate
            ) -> tuple[str, int, Any]:
                gate.wait()
                verdict = "approve" if name == "alice" else "deny"
                status, body = call(
                    "POST",
                    f"{url}/api/approvals/{approval_id}/decision",
                    tokens[name],
                    {"decision": verdict},
                )
                return name, status, body

            results = await asyncio.to_thread(lambda: list(pool.map(post, ["alice", "carol"])))
            statuses = sorted(status for _, status, _ in results)
            assert statuses == [200, 409], results
            [(winner, _, won)] = [r for r in results if r[1] == 200]
            [(_, _, lost)] = [r for r in results if r[1] == 409]
            assert lost["decided_by"] == won["decided_by"] == winner + "2"
            assert (await store.approvals.get(approval_id)).decided_by == winner + "2"


async def test_events_long_poll_answers_when_the_inbox_changes(tmp_path):
    store = SQLiteStore(tmp_path / "ev.db")
    tokens, approval_id = await seed(store)
    with server(SQLiteStore(tmp_path / "ev.db")) as url:
        status, first = await asyncio.to_thread(call, "GET", f"{url}/api/events", tokens["viewer"])
        assert status == 200
        assert first["changed"] is True
        cursor = first["cursor"]
        status, same = await asyncio.to_thread(
            call, "GET", f"{url}/api/events?since={cursor}&wait=0.2", tokens["viewer"]
        )
        assert same == {"cursor": cursor, "changed": False}
        waiting = asyncio.create_task(
            asyncio.to_thread(
                call, "GET", f"{url}/api/events?since={cursor}&wait=20", tokens["viewer"]
            )
        )
        await asyncio.sleep(0.3)
        assert not waiting.done()
        await store.approvals.decide(approval_id, "deny", decided_by="cli-user")
        status, changed = await asyncio.wait_for(waiting, 5)
        assert status == 200
        assert changed["changed"] is True
        assert changed["cursor"] != cursor
        status, _ = await asyncio.to_thread(
            call, "GET", f"{url}/api/events?wait=99", tokens["viewer"]
        )
        assert status == 400
    await store.close()


def test_the_page_and_its_assets_come_only_from_this_server(seeded_server):
    status, page = call("GET", seeded_server.url + "/")
    assert status == 200
    assert '<form id="login-form"' in page
    for asset in ("inbox.js", "inbox.css"):
        status, text = call("GET", f"{seeded_server.url}/static/{asset}")
        assert status == 200
        assert text
        page += text
    assert "http://" not in page
    assert "https://" not in page
    assert "//" + "cdn" not in page
    assert call("GET", seeded_server.url + "/static/../conftest.py")[0] == 404
    assert call("GET", seeded_server.url + "/static/secret.txt")[0] == 404


def test_oversized_and_malformed_bodies_are_refused(seeded_server):
    route = f"{seeded_server.url}/api/approvals/{seeded_server.approval_id}/decision"
    token = seeded_server.tokens["alice"]
    huge = {"decision": "deny", "note": "x" * 100_000}
    assert call("POST", route, token, huge)[0] == 413
    assert call("POST", route, token, b"{not json")[0] == 400
    assert call("POST", route, token, [1, 2])[0] == 400
    assert call("POST", route, token, {"decision": "deny", "edited_args": {"a": 1}})[0] == 400
    assert call("POST", route, token, {"decision": "approve", "extra": 1})[0] == 400
    status, shown = call(
        "GET", f"{seeded_server.url}/api/approvals/{seeded_server.approval_id}", token
    )
    assert status == 200
    assert shown["status"] == "pending"


async def test_an_edit_of_the_wrong_json_type_is_refused_not_coerced(tmp_path):
    store = SQLiteStore(tmp_path / "x.db")
    tokens, approval_id = await seed(store)
    with server(SQLiteStore(tmp_path / "x.db"), app_factory=validating_agent) as url:
        decision = f"{url}/api/approvals/{approval_id}/decision"
        for edit, why in (
            ({"to": 42}, "argument 'to': expected a string, got 42"),
            ({"amount": "5"}, "argument 'amount': expected an integer, got '5'"),
        ):
            body = {"decision": "approve", "edited_args": edit}
            status, answer = await asyncio.to_thread(call, "POST", decision, tokens["alice"], body)
            assert status == 400, answer
            assert why in answer["error"]
        assert (await store.approvals.get(approval_id)).status == "pending"


async def test_the_tool_filter_applies_before_the_limit(tmp_path):
    store = SQLiteStore(tmp_path / "filter.db")
    token = (await store.approvers.add("viewer", ROLES["viewer"])).token
    for i in range(6):  # older approvals of another tool fill the first rows
        call_ = ToolCall(f"d{i}", "delete", {"path": f"/tmp/{i}"})
        interrupt = Interrupt(f"del_{i}", "confirm:Ask", "?", "intervention", "x", call_)
        await store.approvals.request(f"del-{i}", interrupt)
    transfers = await requests_for_race(store, 5)
    with server(SQLiteStore(tmp_path / "filter.db")) as url:
        for limit in (5, 1000):
            status, body = await asyncio.to_thread(
                call,
                "GET",
                f"{url}/api/approvals?status=any&tool=transfer&limit={limit}",
                token,
            )
            assert status == 200
            assert sorted(a["id"] for a in body["approvals"]) == sorted(transfers)
    await store.close()
