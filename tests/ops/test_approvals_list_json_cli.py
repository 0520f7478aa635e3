"""``tether approvals list`` at 80 columns and its filters, ``--json`` on the deciding
commands and on ``audit verify``."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ops_agents import SECRET, delete_agent, transfer_agent
from ops_cli import ENV, cli
from typer.testing import CliRunner

from tether.durable import SQLiteStore, Store
from tether.ops.approvals_cli import list_rows
from tether.ops.cli import app

DECIDED_KEYS = {
    "id",
    "session_id",
    "interrupt_id",
    "source",
    "name",
    "tool",
    "server",
    "arguments",
    "args_sha256",
    "reason",
    "requested_at",
    "expires_at",
    "on_expiry",
    "status",
    "decision",
    "decided_by",
    "decided_at",
    "note",
    "edited_args",
    "response",
}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "ops.db"
    transfer_agent(SQLiteStore(path), "pay", [])("pay bob")
    delete_agent(SQLiteStore(path), "rm", [])("clean")
    return str(path)


def pending(db: str) -> dict[str, Any]:
    rows = asyncio.run(SQLiteStore(db).approvals.pending())
    return {a.tool: a for a in rows}


def test_list_at_80_columns_shows_id_session_tool_age_readably(db):
    narrow = CliRunner(env={**ENV, "COLUMNS": "80"}).invoke(
        app, ["approvals", "list", "--store", db]
    )
    assert narrow.exit_code == 0, narrow.output
    lines = narrow.stdout.splitlines()
    table = [line for line in lines if not line.startswith("decide with: ")]  # one line, to copy
    assert all(len(line) <= 80 for line in table), narrow.stdout
    header = next(line for line in lines if "approval" in line and "session" in line)
    assert [c.strip() for c in header.split("\u2503") if c.strip()] == [
        "approval",
        "session",
        "tool",
        "age",
    ]
    ids = pending(db)
    for tool, approval in ids.items():
        row = next(line for line in lines if approval.id in line)  # ids never wrap
        assert approval.session_id in row
        assert tool in row
    assert "api_token" not in narrow.stdout  # arguments and reasons only with --wide
    wide = cli("approvals", "list", "--wide", "--store", db)
    for column in ("server", "arguments (redacted)", "reason", "expires"):
        assert column in wide.stdout
    assert '"api_token": "***"' in wide.stdout
    assert SECRET not in wide.stdout + narrow.stdout


async def _many(store: Store) -> dict[str, list[str]]:
    """Six transfer approvals filed before five delete ones, all decided."""
    for i in range(6):
        await transfer_agent(store, f"t{i}", []).invoke_async("pay")
    for i in range(5):
        await delete_agent(store, f"d{i}", []).invoke_async("rm")
    by_tool: dict[str, list[str]] = {}
    for approval in await store.approvals.pending(limit=100):
        await store.approvals.decide(approval.id, "deny", decided_by="tester")
        by_tool.setdefault(approval.tool or "", []).append(approval.session_id)
    return by_tool


async def test_every_filter_applies_before_the_limit(stores):
    store = stores()
    by_tool = await _many(store)
    assert len(by_tool["delete"]) == 5
    shown = await list_rows(store, tool="delete", show_all=True, limit=5)
    assert sorted(a.session_id for a in shown) == sorted(by_tool["delete"])
    assert [a.tool for a in await list_rows(store, tool="delete", show_all=True, limit=2)] == [
        "delete",
        "delete",
    ]
    assert await list_rows(store, tool="delete", limit=5) == []  # none pending
    one = await list_rows(store, session="d3", show_all=True, limit=1)
    assert [a.session_id for a in one] == ["d3"]


def test_list_all_with_a_tool_and_a_limit_counts_matching_rows(tmp_path: Path):
    db = str(tmp_path / "many.db")
    asyncio.run(_many_closed(db))
    out = cli(
        "approvals", "list", "--all", "--tool", "delete", "--limit", "5", "--json", "--store", db
    )
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["tool"] for r in rows] == ["delete"] * 5
    both = cli("approvals", "list", "--all", "--older-than", "1m", "--store", db)
    assert both.exit_code == 2
    assert "--older-than filters pending approvals only" in both.stderr


async def _many_closed(db: str) -> None:
    store = SQLiteStore(db)
    try:
        await _many(store)
    finally:
        await store.close()


def test_approve_deny_and_respond_print_the_decided_approval_as_json(db):
    ids = pending(db)
    denied = cli("approvals", "deny", ids["transfer"].id, "--note", "no", "--as", "al", "--json",
                 "--store", db)  # fmt: skip
    assert denied.exit_code == 0, denied.output
    row = json.loads(denied.stdout)
    assert set(row) == DECIDED_KEYS
    assert (row["id"], row["status"], row["decision"]) == (ids["transfer"].id, "denied", "deny")
    assert (row["decided_by"], row["note"], row["session_id"]) == ("al", "no", "pay")
    assert row["arguments"]["api_token"] == "***"
    assert SECRET not in denied.stdout
    answered = cli("approvals", "respond", ids["delete"].id, '{"skip": "done"}', "--json",
                   "--store", db)  # fmt: skip
    assert answered.exit_code == 0, answered.output
    row = json.loads(answered.stdout)
    assert (row["status"], row["decision"], row["response"]) == (
        "approved",
        "respond",
        {"skip": "done"},
    )
    again = cli("approvals", "approve", ids["delete"].id, "--json", "--store", db)
    assert again.exit_code == 1
    assert again.stdout == ""  # the refusal is on stderr, nothing half-parsable on stdout
    assert again.stderr.strip()


def test_approve_json(tmp_path: Path):
    db = str(tmp_path / "one.db")
    transfer_agent(SQLiteStore(db), "pay", [])("pay bob")
    [approval] = asyncio.run(SQLiteStore(db).approvals.pending())
    out = cli("approvals", "approve", approval.id, "--json", "--store", db)
    assert out.exit_code == 0, out.output
    row = json.loads(out.stdout)
    assert set(row) == DECIDED_KEYS
    assert (row["status"], row["decision"]) == ("approved", "approve")


def test_audit_verify_json_ok_broken_and_rewritten(db):
    ok = cli("audit", "verify", "--json", "--store", db)
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert set(report) == {
        "ok",
        "store",
        "checked",
        "head",
        "first_bad",
        "expected_head",
        "problem",
    }
    assert report["ok"] is True
    assert report["first_bad"] is None
    assert report["problem"] is None
    seq, digest = report["head"].split(":")
    assert int(seq) == report["checked"] > 0
    assert len(digest) == 64
    same = json.loads(cli("audit", "verify", "--json", "--expect-head", report["head"],
                          "--store", db).stdout)  # fmt: skip
    assert same["ok"] is True
    assert same["expected_head"] == report["head"]
    wrong = cli("audit", "verify", "--json", "--expect-head", f"1:{'0' * 64}", "--store", db)
    assert wrong.exit_code == 1
    assert json.loads(wrong.stdout)["problem"] == (
        f"record 1 no longer has hash {'0' * 64}: the chain was rewritten"
    )
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE audit SET body = replace(body, 'pay', 'pax') WHERE seq = 2")
    conn.close()
    broken = cli("audit", "verify", "--json", "--store", db)
    assert broken.exit_code == 1
    report = json.loads(broken.stdout)
    assert report["ok"] is False
    assert report["first_bad"] == {
        "record": 2,
        "reason": "record 2 was edited: its hash does not match its content",
    }
