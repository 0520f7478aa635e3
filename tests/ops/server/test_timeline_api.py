"""GET /api/timeline/{id} and the paged GET /api/sessions, through the real server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from live_server import call, decide_ok, get_ok, live_server, seed, seeded_live_server
from ops_agents import SECRET, transfer_agent
from redacting_agents import ACCOUNT, AMOUNT, PAYEE, make_agent, redacting_agent

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.server import create_app
from tether.session import fold


async def test_the_timeline_shows_each_step_in_order_with_the_edit_and_the_approver(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.db"
    async with seeded_live_server(path) as (url, store, tokens, approval_id):
        edit = {"decision": "approve", "edited_args": {"amount": 5}, "note": "only 5"}
        await decide_ok(url, tokens["alice"], approval_id, edit)
        waiting = await asyncio.to_thread(get_ok, f"{url}/api/timeline/pay-1", tokens["viewer"])
        answers = await store.approvals.answers_for("pay-1")
        ran: list[dict[str, Any]] = []
        await transfer_agent(SQLiteStore(path), "pay-1", ran).resume_async(answers)
        done = await asyncio.to_thread(get_ok, f"{url}/api/timeline/pay-1", tokens["viewer"])
        # a snapshot starts what load() returns: the timeline still reads the whole journal
        record = await store.load("pay-1")
        assert record is not None
        snapshot = [("snapshot", fold(record).to_snapshot())]
        await store.append("pay-1", record.version, snapshot)  # type: ignore[arg-type]
        assert (await store.load("pay-1")).snapshot is not None  # type: ignore[union-attr]
        after = await asyncio.to_thread(get_ok, f"{url}/api/timeline/pay-1", tokens["viewer"])
    assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]
    assert [s["title"] for s in after["steps"]] == [s["title"] for s in done["steps"]]

    # decided, not resumed yet: the wait runs until the last update, the call has not run
    assert [s["kind"] for s in waiting["steps"]][-2:] == ["suspend", "wait"]
    [pending] = [s for s in waiting["steps"] if s["kind"] == "tool"]
    assert pending["status"] == "pending"
    assert pending["detail"]["edited"]["arguments"]["amount"] == 5

    kinds = [s["kind"] for s in done["steps"]]
    assert kinds == [
        "run", "input", "model", "verdict", "interrupt", "suspend", "wait",
        "run", "verdict", "tool", "model", "end",
    ]  # fmt: skip
    steps = done["steps"]
    assert [s["index"] for s in steps] == list(range(len(steps)))
    assert steps[7]["title"].startswith("resumed by ")
    assert steps[7]["detail"]["resume"] is True
    tool_row = steps[9]
    assert (tool_row["title"], tool_row["status"], tool_row["failed"]) == ("transfer", "ok", False)
    assert tool_row["detail"]["arguments"] == {"to": "bob", "amount": 500, "api_token": "***"}
    edited = tool_row["detail"]["edited"]
    assert edited["arguments"] == {"to": "bob", "amount": 5, "api_token": "***"}
    assert (edited["decided_by"], edited["approval_id"]) == ("alice", approval_id)
    assert tool_row["detail"]["result"] == "sent 5 to bob"
    assert tool_row["detail"]["duration_ms"] >= 0  # measured, from the audit log
    interrupt = steps[4]
    assert (interrupt["status"], interrupt["approval_id"]) == ("answered", approval_id)
    approval = interrupt["detail"]["approval"]
    assert (approval["decided_by"], approval["note"], approval["decision"]) == (
        "alice",
        "only 5",
        "approve_edited",
    )
    assert interrupt["detail"]["answered_at"] >= approval["decided_at"]
    assert interrupt["audit_seqs"]  # interrupt.raised, approval.requested/decided records
    assert interrupt["call_id"] == tool_row["call_id"]
    assert steps[3]["detail"]["policy"] == "AskFirst"
    assert steps[-1]["title"] == "run completed"
    wait = steps[6]
    assert wait["duration"] > 0
    assert wait["start"] == steps[5]["start"]
    assert wait["end"] == steps[7]["start"]

    usage = done["usage"]
    assert [c["step"] for c in usage["calls"]] == [2, 10]
    assert usage["calls"][-1]["cumulative"] == usage["total_tokens"] > 0
    split = done["time_split"]
    assert split["waiting"] == pytest.approx(wait["duration"])
    parts = split["model"] + split["tools"] + split["waiting"] + split["tether"]
    assert parts == pytest.approx(split["total"])
    places = done["axis"]["places"]
    assert len(places) == len(steps)
    # the wait is compressed on the axis: shorter there than in real time
    assert places[6]["w"] < wait["duration"]
    assert SECRET not in json.dumps(done)
    assert SECRET not in json.dumps(waiting)


def _failing_agent(store: SQLiteStore) -> Agent:
    @tool
    def flaky(n: int) -> str:
        """Fails."""
        raise RuntimeError(f"boom {n}")

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "tool":
            return "gave up"
        return {"tool_calls": [{"name": "flaky", "args": {"n": 3}}]}

    return Agent(model=ScriptedModel(script), tools=[flaky], store=store, session_id="team/f/1")


async def test_a_failing_and_a_denied_tool_call_are_marked_failed(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    store = SQLiteStore(path)
    tokens, approval_id = await seed(store)
    await _failing_agent(store).invoke_async("try")
    with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
        await decide_ok(url, tokens["alice"], approval_id, {"decision": "deny", "note": "no"})
        answers = await store.approvals.answers_for("pay-1")
        await transfer_agent(SQLiteStore(path), "pay-1", []).resume_async(answers)
        denied = await asyncio.to_thread(get_ok, f"{url}/api/timeline/pay-1", tokens["viewer"])
        failing = await asyncio.to_thread(
            get_ok, f"{url}/api/timeline/team%2Ff%2F1", tokens["viewer"]
        )
    await store.close()
    [transfer] = [s for s in denied["steps"] if s["kind"] == "tool"]
    assert (transfer["status"], transfer["failed"]) == ("denied", True)
    assert transfer["detail"]["edited"] is None
    [flaky] = [s for s in failing["steps"] if s["kind"] == "tool"]
    assert (flaky["status"], flaky["failed"]) == ("error", True)
    assert "boom 3" in flaky["detail"]["result"]
    assert failing["session_id"] == "team/f/1"


@pytest.mark.parametrize("with_app", [False, True], ids=["no-app", "app"])
async def test_the_custom_redactor_masks_the_timeline_too(tmp_path: Path, with_app: bool) -> None:
    path = tmp_path / "r.db"
    store = SQLiteStore(path)
    tokens, _ = await seed(store)
    assert (await redacting_agent(store, "pay-r", []).invoke_async("pay")).stop_reason == (
        "interrupt"
    )
    await store.close()
    options: dict[str, Any] = {"app_factory": make_agent} if with_app else {}
    with live_server(create_app(SQLiteStore(path), close_store=True, **options)) as url:
        timeline = await asyncio.to_thread(get_ok, f"{url}/api/timeline/pay-r", tokens["viewer"])
    text = json.dumps(timeline)
    for value in (PAYEE, str(AMOUNT), SECRET):
        assert value not in text, value  # arguments, the model's text, the reason
    assert "paying ***" in text
    [transfer] = [s for s in timeline["steps"] if s["kind"] == "tool" and s["title"] == "transfer"]
    assert transfer["detail"]["arguments"] == {"to": "***", "amount": "***", "api_token": "***"}
    if with_app:  # the agent's redactor masks a call that never asked for approval too
        assert ACCOUNT not in text


async def test_timeline_errors_name_the_session_and_roles_apply(seeded_server: Any) -> None:
    url, tokens = seeded_server.url, seeded_server.tokens
    status, body = await asyncio.to_thread(
        call, "GET", f"{url}/api/timeline/nope%2Fx", tokens["viewer"]
    )
    assert status == 404
    assert body["error"] == "no session 'nope/x' in this store"
    status, body = await asyncio.to_thread(
        call, "GET", f"{url}/api/timeline/pay-1", tokens["nobody"]
    )
    assert status == 403
    status, _ = await asyncio.to_thread(call, "GET", f"{url}/api/timeline/pay-1")
    assert status == 401


async def test_the_sessions_list_pages_filters_and_counts(seeded_server: Any) -> None:
    url, tokens = seeded_server.url, seeded_server.tokens
    page = await asyncio.to_thread(get_ok, f"{url}/api/sessions?limit=1", tokens["viewer"])
    assert (page["total"], page["offset"], page["limit"], len(page["sessions"])) == (2, 0, 1, 1)
    second = await asyncio.to_thread(
        get_ok, f"{url}/api/sessions?limit=1&offset=1", tokens["viewer"]
    )
    ids = {page["sessions"][0]["session_id"], second["sessions"][0]["session_id"]}
    assert ids == {"pay-1", "del-1"}
    found = await asyncio.to_thread(get_ok, f"{url}/api/sessions?q=pay", tokens["viewer"])
    [row] = found["sessions"]
    assert (row["session_id"], row["status"], row["pending_approvals"]) == ("pay-1", "suspended", 1)
    assert (row["model_calls"], row["tool_calls"]) == (1, 0)
    assert row["total_tokens"] == row["input_tokens"] + row["output_tokens"] > 0
    assert row["age_seconds"] >= row["idle_seconds"] >= 0
    none = await asyncio.to_thread(get_ok, f"{url}/api/sessions?status=completed", tokens["viewer"])
    assert (none["total"], none["sessions"]) == (0, [])
    status, body = await asyncio.to_thread(
        call, "GET", f"{url}/api/sessions?q={'x' * 201}", tokens["viewer"]
    )
    assert status == 400
    assert "'q' must be at most 200 characters" in body["error"]
    status, body = await asyncio.to_thread(
        call, "GET", f"{url}/api/sessions?offset=-1", tokens["viewer"]
    )
    assert status == 400
    assert "'offset'" in body["error"]
    status, _ = await asyncio.to_thread(call, "GET", f"{url}/api/sessions", tokens["nobody"])
    assert status == 403


def _lower(items: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in items}


def _export(url: str, token: str) -> tuple[int, dict[str, str], str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            return response.status, _lower(response.headers.items()), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, _lower(exc.headers.items()), exc.read().decode()


async def test_the_audit_export_streams_jsonl_with_the_chain_status(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "a.db"
    store = SQLiteStore(path)
    tokens, _ = await seed(store)
    await store.close()
    with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
        route = f"{url}/api/audit/export?session=pay-1"
        status, headers, text = await asyncio.to_thread(_export, route, tokens["auditor"])
        listed = await asyncio.to_thread(
            get_ok, f"{url}/api/audit?session=pay-1&limit=10000", tokens["auditor"]
        )
        _, _, everything = await asyncio.to_thread(
            _export, f"{url}/api/audit/export", tokens["admin"]
        )
        refused = await asyncio.to_thread(_export, route, tokens["viewer"])
        conn = sqlite3.connect(path)
        with conn:
            conn.execute("UPDATE audit SET body = replace(body, 'pay', 'pax') WHERE seq = 2")
        conn.close()
        broken = await asyncio.to_thread(_export, route, tokens["auditor"])
    assert status == 200
    assert headers["content-type"].startswith("application/x-ndjson")
    assert headers["x-tether-audit-chain"] == "ok"
    assert 'filename="audit-pay-1.jsonl"' in headers["content-disposition"]
    first, *records = [json.loads(line) for line in text.splitlines()]
    assert first["chain"]["ok"] is True
    assert first["session_id"] == "pay-1"
    assert first["through_seq"] == first["chain"]["head"]["seq"] >= len(records)
    assert records == listed["records"]  # the same records as /api/audit, in chain order
    assert records
    assert all(r["session_id"] == "pay-1" for r in records)
    whole = [json.loads(line) for line in everything.splitlines()][1:]
    assert len(whole) == first["through_seq"]  # every record of the log, without a session
    # a viewer does not read the audit log; the message names the roles that do
    assert refused[0] == 403
    assert "auditor or admin" in json.loads(refused[2])["error"]
    # a tampered record: the export still streams, and says the chain is broken where
    assert broken[1]["x-tether-audit-chain"] == "broken"
    chain = json.loads(broken[2].splitlines()[0])["chain"]
    assert chain["ok"] is False
    assert chain["first_bad"]["position"] == 2


async def test_an_approval_links_to_its_timeline_and_the_step_back(seeded_server: Any) -> None:
    url, tokens = seeded_server.url, seeded_server.tokens
    approval = await asyncio.to_thread(
        get_ok, f"{url}/api/approvals/{seeded_server.approval_id}", tokens["viewer"]
    )
    assert approval["links"] == {"timeline": "/api/timeline/pay-1", "page": "/#timeline=pay-1"}
    timeline = await asyncio.to_thread(
        get_ok, url + approval["links"]["timeline"], tokens["viewer"]
    )
    [step] = [s for s in timeline["steps"] if s["approval_id"] == approval["id"]]
    assert step["kind"] == "interrupt"
    audit = await asyncio.to_thread(
        get_ok, f"{url}/api/audit?session=pay-1&limit=10000", tokens["auditor"]
    )
    linked = {r["seq"]: r["event"] for r in audit["records"] if r["seq"] in step["audit_seqs"]}
    assert "approval.requested" in linked.values()
    assert len(linked) == len(step["audit_seqs"])
