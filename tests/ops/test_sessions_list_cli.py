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
    assert names == ["session", "status", "first prompt", "tokens", "cost", "pending"]
    pay = next(line for line in lines if line.startswith("│ pay "))
    cells = [c.strip() for c in pay.split("│")[1:-1]]
    assert cells[:3] == ["pay", "suspended", "pay bob with ***"]
    assert cells[5] == "1"  # one pending approval
    assert int(cells[3]) > 0
    assert cells[4] == "-"  # a ScriptedModel without a provider: no price, never $0
    hi = next(line for line in lines if line.startswith("│ hi "))
    assert "say hi\\x1b[2J\\u202eevil" in hi  # visible, never obeyed
    assert "\x1b" not in out.stdout
    assert "\u202e" not in out.stdout
    assert SECRET not in out.stdout


def test_list_wide_and_json_carry_the_counts(tmp_path: Path) -> None:
    db = _store(tmp_path)
    wide = cli("sessions", "list", "--store", db)  # 250 columns
    header = next(line for line in wide.stdout.splitlines() if "\u2503 session" in line)
    for name in (
        "entries",
        "first prompt",
        "model calls",
        "tool calls",
        "tokens",
        "cost",
        "pending",
    ):
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


def test_list_and_show_carry_a_priced_sessions_cost(tmp_path: Path) -> None:
    from decimal import Decimal

    db = str(tmp_path / "s.db")
    usage = {"input_tokens": 20_000, "output_tokens": 3000, "cache_read_tokens": 15_000}
    model = ScriptedModel(
        [{"text": "one", "usage": usage}, {"text": "two", "usage": usage}],
        provider="openai",
        name="gpt-4o",
    )
    agent = Agent(model=model, store=SQLiteStore(db), session_id="paid")
    cost = agent("a").usage.cost + agent("b").usage.cost  # type: ignore[operator]
    out = CliRunner(env={**ENV, "COLUMNS": "80"}).invoke(app, ["sessions", "list", "--store", db])
    assert out.exit_code == 0, out.output
    row = next(line for line in out.stdout.splitlines() if line.startswith("│ paid "))
    assert [c.strip() for c in row.split("│")[1:-1]][4] == f"${cost:.4f}"
    listed = json.loads(cli("sessions", "list", "--json", "--store", db).stdout)
    assert Decimal(listed["cost"]) == cost
    shown = cli("sessions", "show", "paid", "--store", db).stdout
    assert shown.count(f"tokens, ${cost / 2:.4f}") == 2  # each answer's cost
    drawn = cli("sessions", "timeline", "paid", "--store", db).stdout
    assert f"cost ${cost:.4f}" in drawn
    assert drawn.count(f"out, ${cost / 2:.4f}") == 2  # each call's cost on its row
    timeline = json.loads(cli("sessions", "timeline", "paid", "--json", "--store", db).stdout)
    assert Decimal(timeline["usage"]["cost"]) == cost
    assert [Decimal(c["cost"]) for c in timeline["usage"]["calls"]] == [cost / 2, cost / 2]
