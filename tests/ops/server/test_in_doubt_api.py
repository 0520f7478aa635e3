"""A call a crash left in doubt has its own answers over HTTP: retry, skip with a result,
abort; approve/deny (which would hide that approving re-runs a side effect) are refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from live_server import ROLES, call, live_server
from ops_agents import SECRET, crash_mid_call, effect_agent

from tether.durable import SQLiteStore
from tether.ops.server import create_app


async def in_doubt(store: SQLiteStore, session: str) -> str:
    """The id of the in_doubt approval of a fresh crashed session."""
    await crash_mid_call(store, session)
    asked = await effect_agent(store, session, []).resume_async()
    assert asked.stop_reason == "interrupt"
    [approval] = await store.approvals.pending(session_id=session)
    assert approval.source == "in_doubt"
    return approval.id


@pytest.mark.parametrize(
    ("body", "answer", "ran", "stop", "text"),
    [
        ({"decision": "retry"}, "retry", [SECRET], "end_turn", "finished: effect done"),
        (
            {"decision": "skip", "result": "sent already (ticket 7)", "note": "checked"},
            {"skip": "sent already (ticket 7)"},
            [],
            "end_turn",
            "finished: sent already (ticket 7)",
        ),
        ({"decision": "abort", "note": "stop"}, "abort", [], "cancelled", None),
    ],
)
async def test_an_in_doubt_call_is_retried_skipped_or_aborted_over_http(
    tmp_path: Path, body: dict[str, Any], answer: Any, ran: list[str], stop: str, text: str | None
) -> None:
    db = tmp_path / "doubt.db"
    store = SQLiteStore(db)
    approval_id = await in_doubt(store, "doubt-1")
    token = (await store.approvers.add("alice", ROLES["alice"])).token
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        status, shown = await asyncio.to_thread(
            call, "GET", f"{url}/api/approvals/{approval_id}", token
        )
        assert status == 200
        assert shown["actions"] == ["retry", "skip", "abort"]
        assert shown["may_have_run"] is True
        assert shown["takes_edits"] is False
        status, session = await asyncio.to_thread(call, "GET", f"{url}/api/sessions/doubt-1", token)
        assert status == 200
        [started] = session["open_batch"]
        assert (started["name"], started["in_doubt"], started["result"]) == ("effect", True, None)

        route = f"{url}/api/approvals/{approval_id}/decision"
        status, decided = await asyncio.to_thread(call, "POST", route, token, body)
        assert status == 200, decided
        assert decided["decided_by"] == "alice"
    assert await store.approvals.answers_for("doubt-1") == {
        (await store.approvals.get(approval_id)).interrupt_id: answer
    }
    effects: list[str] = []
    done = await effect_agent(store, "doubt-1", effects).resume_async(
        await store.approvals.answers_for("doubt-1")
    )
    assert done.stop_reason == stop
    assert effects == ran  # only a retry runs the side effect again
    if text is not None:
        assert done.text == text
    assert (await store.audit.verify()).ok
    await store.close()


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"decision": "approve"}, "may have run"),
        ({"decision": "deny"}, "'retry' (run the call again"),
        ({"decision": "skip"}, "'skip' needs a 'result'"),
        ({"decision": "retry", "result": 1}, "'result' goes with a 'skip'"),
        ({"decision": "retry", "edited_args": {"token": "x"}}, "go with an 'approve'"),
    ],
)
async def test_approve_and_deny_and_malformed_answers_of_a_call_in_doubt_are_400(
    tmp_path: Path, body: dict[str, Any], why: str
) -> None:
    db = tmp_path / "doubt.db"
    store = SQLiteStore(db)
    approval_id = await in_doubt(store, "doubt-2")
    token = (await store.approvers.add("alice", ROLES["alice"])).token
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        route = f"{url}/api/approvals/{approval_id}/decision"
        status, answer = await asyncio.to_thread(call, "POST", route, token, body)
        assert status == 400
        assert why in answer["error"]
    assert (await store.approvals.get(approval_id)).status == "pending"  # nothing recorded
    assert not [r for r in await store.audit.records() if r.event == "approval.decided"]
    await store.close()


def test_in_doubt_answers_are_refused_for_a_confirm(seeded_server) -> None:
    route = f"{seeded_server.url}/api/approvals/{seeded_server.approval_id}/decision"
    for decision in ("retry", "abort"):
        status, answer = call("POST", route, seeded_server.tokens["alice"], {"decision": decision})
        assert status == 400
        assert "takes 'approve' or 'deny'" in answer["error"]
    status, shown = call(
        "GET",
        f"{seeded_server.url}/api/approvals/{seeded_server.approval_id}",
        seeded_server.tokens["alice"],
    )
    assert (shown["status"], shown["actions"], shown["may_have_run"]) == (
        "pending",
        ["approve", "deny"],
        False,
    )
