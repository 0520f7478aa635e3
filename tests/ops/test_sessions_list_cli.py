"""``tether sessions list``: the first prompt and the web list's counts, at 80 columns and
in ``--json``; the prompt is untrusted text."""

from __future__ import annotations

import json
from pathlib import Path

from ops_agents import SECRET, transfer_agent
from ops_cli import ENV, cli
from typer.testing import CliRunner

from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.cli import app


def _store(tmp_path: Path) -> str:
    db = str(tmp_path / "s.db")
    transfer_agent(SQLiteStore(db), "pay", [])(f"pay bob with {SECRET}")
    Agent(model=ScriptedModel(["ok"]), store=SQLiteStore(db), session_id="hi")(
        "say hi\x1b[2J\u202eevil"
    )
    return db


def test_list_shows_prompt_tokens_and_pending_at_80_columns(tmp_path: Path) -> None:
    db = _store(tmp_path)
    out = CliRunner(env={**ENV, "COLUMNS": "80"}).invoke(app, ["sessions", "list", "--store", db])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), out.stdout
    header = next(line for line in lines if "session" in line and "status" in line)
    names = [c.strip() for c in header.split("\u2503") if c.strip()]
    assert names == ["session", "status", "first prompt", "tokens", "pending"]
    pay = next(line for line in lines if line.startswith("│ pay "))
    cells = [c.strip() for c in pay.split("│")[1:-1]]
    assert cells[:3] == ["pay", "suspended", "pay bob with ***"]
    assert cells[4] == "1"  # one pending approval
    assert int(cells[3]) > 0
    hi = next(line for line in lines if line.startswith("│ hi "))
    assert "say hi\\x1b[2J\\u202eevil" in hi  # visible, never obeyed
    assert "\x1b" not in out.stdout
    assert "\u202e" not in out.stdout
    assert SECRET not in out.stdout


def test_list_wide_and_json_carry_the_counts(tmp_path: Path) -> None:
    db = _store(tmp_path)
    wide = cli("sessions", "list", "--store", db)  # 250 columns
    header = next(line for line in wide.stdout.splitlines() if "\u2503 session" in line)
    for name in ("entries", "first prompt", "model calls", "tool calls", "tokens", "pending"):
        assert name in header
    rows = {r["session_id"]: r for r in map(json.loads, cli("sessions", "list", "--json",
                                                             "--store", db).stdout.splitlines())}  # fmt: skip
    pay = rows["pay"]
    assert pay["first_prompt"] == "pay bob with ***"
    assert (pay["model_calls"], pay["pending_approvals"]) == (1, 1)
    assert pay["total_tokens"] == pay["input_tokens"] + pay["output_tokens"]
    assert rows["hi"]["first_prompt"] == "say hi\x1b[2J\u202eevil"  # JSON keeps the value
    assert SECRET not in json.dumps(rows)


def test_the_api_sessions_list_carries_the_first_prompt(tmp_path: Path) -> None:
    import asyncio

    from live_server import call, live_server

    from tether.ops.server import create_app

    db = _store(tmp_path)
    token = asyncio.run(SQLiteStore(db).approvers.add("admin", ["admin"])).token
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        status, body = call("GET", f"{url}/api/sessions", token)
    assert status == 200
    rows = {r["session_id"]: r for r in body["sessions"]}
    assert rows["pay"]["first_prompt"] == "pay bob with ***"
    assert rows["hi"]["first_prompt"] == "say hi\x1b[2J\u202eevil"  # the page escapes it
    assert SECRET not in json.dumps(body)
