"""What ran, as every view shows it: a policy Transform and an approver's edit are one
record (the ``ran`` of the call's ``tool_intent`` entry), read by ``sessions show``,
``sessions timeline`` (+ ``--json``), ``sessions export`` and the HTTP session and
timeline views, redacted like every other argument."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from live_server import get_ok, live_server
from ops_agents import SECRET, ran_with_sessions
from ops_cli import cli

from tether.durable import MemoryStore, SQLiteStore
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.ops.server import create_app
from tether.ops.timeline import read_timeline, timeline_of

PINNED = {"amount": 500, "api_token": "***", "to": "escrow"}
EDITED = {"amount": 5, "api_token": "***", "to": "bob"}


def _ran_db(tmp: Path) -> Path:
    db = tmp / "ran.db"
    ran = asyncio.run(ran_with_sessions(db))
    assert ran == [
        {"to": "escrow", "amount": 500, "api_token": SECRET},
        {"to": "bob", "amount": 5, "api_token": SECRET},
        {"to": "bob", "amount": 500, "api_token": SECRET},
    ]
    return db


async def _intents(db: Path, sid: str) -> list[dict[str, Any]]:
    store = SQLiteStore(db)
    try:
        return [e.data for e in await store.read_entries(sid, 0) if e.kind == "tool_intent"]
    finally:
        await store.close()


def test_every_view_shows_what_a_transform_and_an_edit_ran(tmp_path: Path) -> None:
    db = _ran_db(tmp_path)
    store = str(db)

    # the record: the intent carries the real arguments that ran and who changed them
    [pinned] = asyncio.run(_intents(db, "pin-1"))
    assert pinned["ran"] == {
        "arguments": {"to": "escrow", "amount": 500, "api_token": SECRET},
        "by": ["transform:PinRecipient"],
    }
    [edited] = asyncio.run(_intents(db, "edit-1"))
    assert edited["ran"]["by"] == ["edit"]
    assert edited["ran"]["arguments"]["amount"] == 5
    [plain] = asyncio.run(_intents(db, "plain-1"))
    assert set(plain) == {"call_id", "name"}  # what ran is the model's call: nothing more

    # sessions show: a line under the call, redacted
    shown = cli("sessions", "show", "pin-1", "--store", store)
    assert shown.exit_code == 0, shown.output
    assert f"ran with {json.dumps(PINNED)} (Transform by PinRecipient)" in shown.output
    shown_edit = cli("sessions", "show", "edit-1", "--store", store).output
    assert "ran with edited arguments (by alice at" in shown_edit
    assert "ran with" not in cli("sessions", "show", "plain-1", "--store", store).output
    as_json = json.loads(cli("sessions", "show", "pin-1", "--store", store, "--json").output)
    [record] = as_json["ran_with"].values()
    assert (record["arguments"], record["by"]) == (PINNED, ["transform:PinRecipient"])
    assert record["label"] == "Transform by PinRecipient"

    # sessions timeline, text and --json
    text = cli("sessions", "timeline", "pin-1", "--store", store).output
    assert f"ran with {json.dumps(PINNED)} (Transform by PinRecipient)" in text
    text = cli("sessions", "timeline", "edit-1", "--store", store).output
    assert f"ran with {json.dumps(EDITED)} (by alice)" in text
    timeline = json.loads(cli("sessions", "timeline", "pin-1", "--store", store, "--json").output)
    [tool] = [s for s in timeline["steps"] if s["kind"] == "tool"]
    assert tool["detail"]["arguments"]["to"] == "bob"  # the model's call
    assert tool["detail"]["edited"]["arguments"] == PINNED  # what ran
    assert tool["detail"]["edited"]["label"] == "Transform by PinRecipient"
    timeline = json.loads(cli("sessions", "timeline", "edit-1", "--store", store, "--json").output)
    [tool] = [s for s in timeline["steps"] if s["kind"] == "tool"]
    assert (tool["detail"]["edited"]["label"], tool["detail"]["edited"]["decided_by"]) == (
        "edited by alice",
        "alice",
    )

    # sessions export: the model's call, and what ran next to it
    for sid, args, by in (
        ("pin-1", PINNED, "Transform by PinRecipient"),
        ("edit-1", EDITED, "edited by alice"),
    ):
        lines = cli("sessions", "export", sid, "--store", store).output.splitlines()
        [call] = [c for row in map(json.loads, lines) for c in row.get("tool_calls") or []]
        assert json.loads(call["function"]["arguments"])["to"] == "bob"
        assert json.loads(call["ran_with"]["arguments"]) == args
        assert call["ran_with"]["by"] == by
    lines = cli("sessions", "export", "plain-1", "--store", store).output.splitlines()
    assert "ran_with" not in "".join(lines)

    for sid in ("pin-1", "edit-1"):
        for view in ("show", "timeline", "export"):
            assert SECRET not in cli("sessions", view, sid, "--store", store).output


async def _viewer(db: Path) -> str:
    store = SQLiteStore(db)
    try:
        return (await store.approvers.add("vera", ["viewer"])).token
    finally:
        await store.close()


def test_the_http_session_and_timeline_views_show_what_ran(tmp_path: Path) -> None:
    db = _ran_db(tmp_path)
    token = asyncio.run(_viewer(db))
    app = create_app(SQLiteStore(db), close_store=True)
    with live_server(app) as url:
        for sid, args, label in (
            ("pin-1", PINNED, "Transform by PinRecipient"),
            ("edit-1", EDITED, "edited by alice"),
        ):
            session = get_ok(f"{url}/api/sessions/{sid}", token)
            blocks = [b for m in session["messages"] for b in m["content"]]
            [call] = [b for b in blocks if b["type"] == "tool_call"]
            assert call["arguments"]["to"] == "bob"
            assert (call["edited"]["arguments"], call["edited"]["label"]) == (args, label)
            timeline = get_ok(f"{url}/api/timeline/{sid}", token)
            [tool] = [s for s in timeline["steps"] if s["kind"] == "tool"]
            assert (tool["detail"]["edited"]["arguments"], tool["detail"]["edited"]["label"]) == (
                args,
                label,
            )
            assert SECRET not in json.dumps([session, timeline])
        session = get_ok(f"{url}/api/sessions/plain-1", token)
        blocks = [b for m in session["messages"] for b in m["content"]]
        assert [b["edited"] for b in blocks if b["type"] == "tool_call"] == [None]


async def test_an_old_journal_without_the_record_shows_its_edit_as_before() -> None:
    """Journals written before the intent carried ``ran``: the answer's edit is shown."""
    store = MemoryStore()
    await store.create("old")
    call = ToolCall("c1", "transfer", {"to": "bob", "amount": 500})
    from tether.control.interrupts import Interrupt

    asked = Interrupt("i1", "confirm:AskFirst", "pay?", "intervention", "before_tool_call", call)
    entries: list[Any] = [
        ("status", {"status": "running", "started_at": 1.0, "by": "w", "resume": False}),
        ("message", {"message": Message("assistant", [call], Usage(3, 1)).to_dict()}),
        ("interrupt_raised", {"interrupts": [asked.to_dict()], "stop_reason": "interrupt"}),
        ("status", {"status": "suspended", "reason": "interrupt"}),
        (
            "interrupt_answered",
            {"answers": {"i1": {"approved": True, "args": {"to": "bob", "amount": 5}}}},
        ),
        ("status", {"status": "running", "started_at": 2.0, "by": "w", "resume": True}),
        ("tool_intent", {"call_id": "c1", "name": "transfer"}),
        ("message", {"message": Message("tool", [ToolResult("c1", "transfer", "sent")]).to_dict()}),
        ("status", {"status": "completed", "reason": None}),
    ]
    await store.append("old", 0, entries)
    data = await read_timeline(store, "old")
    assert data is not None
    [tool] = [s for s in timeline_of(data)["steps"] if s["kind"] == "tool"]
    edited = tool["detail"]["edited"]
    assert (edited["arguments"], edited["by"], edited["label"]) == (
        {"to": "bob", "amount": 5},
        ["edit"],
        "edited by a resume answer",
    )
