"""``tether sessions timeline``: the web page's timeline data in the terminal."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ops_agents import SECRET, transfer_agent, validating_agent
from typer.testing import CliRunner

from tether.durable import SQLiteStore
from tether.ops.cli import app

ENV: dict[str, str | None] = {"COLUMNS": "240", "NO_COLOR": "1", "TETHER_STORE": None}


def cli(*args: str) -> Any:
    result = CliRunner(env=ENV).invoke(app, ["sessions", "timeline", *args])
    assert "Traceback" not in result.output
    return result


SID = "team/[bold]pay\u202e"


async def _approved_with_an_edit_and_resumed(db: Path, sid: str) -> None:
    store = SQLiteStore(db)
    await transfer_agent(store, sid, []).invoke_async("pay bob")
    [approval] = await store.approvals.pending(session_id=sid)
    await store.approvals.decide(
        approval.id,
        "approve",
        decided_by="alice",
        note="only 5",
        edited_args={"amount": 5},
        validate=validating_agent(sid),
    )
    await transfer_agent(store, sid, []).resume_async(await store.approvals.answers_for(sid))
    await store.close()


def test_the_timeline_shows_the_edit_the_approver_and_the_wait(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    sid = SID
    asyncio.run(_approved_with_an_edit_and_resumed(db, sid))
    result = cli(sid, "--store", str(db), "--json")
    assert result.exit_code == 0, result.output
    timeline = json.loads(result.output)
    kinds = [s["kind"] for s in timeline["steps"]]
    assert kinds.count("wait") == 1
    assert kinds.index("interrupt") < kinds.index("wait") < kinds.index("tool")
    [tool] = [s for s in timeline["steps"] if s["kind"] == "tool"]
    assert tool["detail"]["edited"]["arguments"] == {"to": "bob", "amount": 5, "api_token": "***"}
    assert SECRET not in result.output

    text = cli(sid, "--store", str(db)).output
    assert "team/[bold]pay\\u202e" in text  # no markup, the bidi character escaped
    assert "\u202e" not in text
    assert 'ran with {"amount": 5, "api_token": "***", "to": "bob"} (by alice)' in text
    assert "approved by alice: only 5" in text
    assert "waiting for a human" in text
    assert SECRET not in text


def test_an_unknown_session_names_it_and_how_to_list(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    asyncio.run(_approved_with_an_edit_and_resumed(db, "other"))
    result = cli("nope", "--store", str(db))
    assert result.exit_code == 1
    assert "no session 'nope'" in result.output
    assert "tether sessions list" in result.output
