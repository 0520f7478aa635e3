"""GET /api/sessions/{id} goes through the one redaction path: the agent's custom redactor
(from --app, or learned from the approval rows), the default secret mask, the scrub of
hidden values from all other text, and the edited arguments a call ran with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from live_server import call, decide_ok, get_ok, live_server, seed, seeded_live_server
from ops_agents import SECRET, transfer_agent
from redacting_agents import ACCOUNT, AMOUNT, PAYEE, make_agent, redacting_agent

from tether.durable import SQLiteStore
from tether.ops.server import create_app


async def _suspended(path: Path) -> dict[str, str]:
    store = SQLiteStore(path)
    try:
        tokens, _ = await seed(store)
        result = await redacting_agent(store, "pay-r", []).invoke_async("pay")
        assert result.stop_reason == "interrupt"
        return tokens
    finally:
        await store.close()


@pytest.mark.parametrize("with_app", [False, True], ids=["no-app", "app"])
async def test_a_custom_redactor_applies_to_every_part_of_the_session_view(
    tmp_path: Path, with_app: bool
) -> None:
    path = tmp_path / "r.db"
    tokens = await _suspended(path)
    options: dict[str, Any] = {"app_factory": make_agent} if with_app else {}
    with live_server(create_app(SQLiteStore(path), close_store=True, **options)) as url:
        [row] = (
            await asyncio.to_thread(get_ok, f"{url}/api/approvals?session=pay-r", tokens["alice"])
        )["approvals"]
        assert row["arguments"] == {"to": "***", "amount": "***", "api_token": "***"}
        session = await asyncio.to_thread(get_ok, f"{url}/api/sessions/pay-r", tokens["viewer"])
    [waiting] = session["waiting_for"]
    assert waiting["tool_call"]["arguments"] == row["arguments"]
    [call_block] = [b for b in session["messages"][-1]["content"] if b["type"] == "tool_call"]
    assert call_block["arguments"] == row["arguments"]
    assert call_block["edited"] is None
    [batch] = session["open_batch"]
    assert batch["arguments"] == row["arguments"]
    text = json.dumps(session)
    for value in (PAYEE, str(AMOUNT), SECRET):
        assert value not in text, value  # nor in the model's text ("paying ...") or the reason
    assert "paying ***" in text
    lookup = session["messages"][1]["content"][0]
    assert lookup["name"] == "lookup"
    if with_app:  # the agent's redactor masks a tool that never asked for an approval too
        assert lookup["arguments"] == {"account": "***"}
        assert ACCOUNT not in text


async def test_the_transcript_shows_the_edited_arguments_that_ran_and_who_edited(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.db"
    async with seeded_live_server(path) as (url, store, tokens, approval_id):
        edit = {"decision": "approve", "edited_args": {"amount": 7}, "note": "only 7"}
        await decide_ok(url, tokens["alice"], approval_id, edit)
        before = await asyncio.to_thread(get_ok, f"{url}/api/sessions/pay-1", tokens["viewer"])
        ran: list[dict[str, Any]] = []
        answers = await store.approvals.answers_for("pay-1")
        await transfer_agent(SQLiteStore(path), "pay-1", ran).resume_async(answers)
        assert ran == [{"to": "bob", "amount": 7, "api_token": SECRET}]
        after = await asyncio.to_thread(get_ok, f"{url}/api/sessions/pay-1", tokens["viewer"])
    for session in (before, after):  # decided (not yet resumed), then ran
        calls = [b for m in session["messages"] for b in m["content"] if b["type"] == "tool_call"]
        [transfer] = calls
        assert transfer["arguments"] == {"to": "bob", "amount": 500, "api_token": "***"}
        edited = transfer["edited"]
        assert edited["arguments"] == {"to": "bob", "amount": 7, "api_token": "***"}
        assert edited["decided_by"] == "alice"
        assert edited["approval_id"] == approval_id
        assert edited["decided_at"] > 0
        assert SECRET not in json.dumps(session)
    results = [b for m in after["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert results[0]["content"] == "sent 7 to bob"


async def test_an_edit_of_a_masked_value_is_refused_over_http(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with seeded_live_server(path) as (url, store, tokens, approval_id):
        decision = f"{url}/api/approvals/{approval_id}/decision"
        edit = {"decision": "approve", "edited_args": {"api_token": "sk-new-0000111"}}
        status, body = await asyncio.to_thread(call, "POST", decision, tokens["alice"], edit)
        assert status == 400
        assert "may not set 'api_token'" in body["error"]
        assert (await store.approvals.get(approval_id)).status == "pending"
