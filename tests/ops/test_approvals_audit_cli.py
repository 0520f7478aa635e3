"""``tether approvals``, ``tether approvers`` and ``tether audit`` on stores written by real runs."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ops_agents import SECRET, delete_agent, transfer_agent
from ops_cli import ENV, cli
from typer.testing import CliRunner

from tether.durable import SQLiteStore
from tether.ops.approvals_cli import parse_age
from tether.ops.cli import app

TETHER = str(Path(sys.executable).with_name("tether"))


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "ops.db"
    transfer_agent(SQLiteStore(path), "pay", [])("pay bob")
    delete_agent(SQLiteStore(path), "rm", [])("clean")
    return str(path)


def pending(db: str) -> dict[str, Any]:
    rows = asyncio.run(SQLiteStore(db).approvals.pending())
    return {a.tool: a for a in rows}


def test_list_shows_redacted_pending_approvals_with_filters(db):
    out = cli("approvals", "list", "--wide", "--store", db)
    assert out.exit_code == 0
    ids = pending(db)
    for approval in ids.values():
        assert approval.id in out.stdout
    assert '"api_token": "***"' in out.stdout
    assert SECRET not in out.stdout
    assert "send 500 to bob using ***?" in out.stdout
    assert "in 23h (deny)" in out.stdout
    for column in (
        "approval",
        "session",
        "tool",
        "arguments (redacted)",
        "reason",
        "age",
        "expires",
    ):
        assert column in out.stdout
    only = cli("approvals", "list", "--tool", "delete", "--store", db)
    assert ids["delete"].id in only.stdout
    assert ids["transfer"].id not in only.stdout
    by_session = cli("approvals", "list", "--session", "pay", "--store", db)
    assert ids["transfer"].id in by_session.stdout
    assert ids["delete"].id not in by_session.stdout
    old = cli("approvals", "list", "--older-than", "10m", "--store", db)
    assert old.stdout.strip() == f"no pending approvals in {db}"
    bad = cli("approvals", "list", "--older-than", "soon", "--store", db)
    assert bad.exit_code == 2
    assert "'soon' is not an age; use e.g. 90, 30s, 10m, 2h or 1d" in bad.stderr
    assert parse_age("2h") == 7200
    assert parse_age("90") == 90


def test_show_approve_with_edit_and_conflict(db):
    approval = pending(db)["transfer"]
    shown = cli("approvals", "show", approval.id, "--store", db)
    assert shown.exit_code == 0
    assert approval.args_sha256 in shown.stdout
    assert "pending" in shown.stdout
    assert SECRET not in shown.stdout
    invalid = cli("approvals", "approve", approval.id, "--edit", "[1]", "--store", db)
    assert invalid.exit_code == 2
    assert "edited arguments must be a JSON object" in invalid.stderr
    broken = cli("approvals", "approve", approval.id, "--edit", "{nope", "--store", db)
    assert "not valid JSON" in broken.stderr
    wrong = cli(
        "approvals", "approve", approval.id, "--edit", '{"amount": "lots"}',
        "--app", "ops_agents:validating_agent", "--store", db,
    )  # fmt: skip
    assert wrong.exit_code == 1
    assert "edited arguments for tool 'transfer' are invalid" in wrong.stderr
    ok = cli(
        "approvals", "approve", approval.id, "--edit", '{"amount": 5}', "--note", "cap it",
        "--as", "alice", "--app", "ops_agents:validating_agent", "--store", db,
    )  # fmt: skip
    assert ok.exit_code == 0, ok.stderr
    assert f"approved {approval.id} with edited arguments as alice" in ok.stdout
    again = cli("approvals", "deny", approval.id, "--as", "bob", "--store", db)
    assert again.exit_code == 1
    assert f"approval {approval.id} was already decided: approved by alice at" in again.stderr
    assert "the first decision wins and yours was not recorded" in again.stderr
    decided = cli("approvals", "show", approval.id, "--store", db)
    for text in ("approve_edited", "alice", "cap it", '"amount": 5'):
        assert text in decided.stdout
    assert asyncio.run(SQLiteStore(db).load("pay")).status == "ready"
    # a worker (here: the test) resumes with the decided answers: the tool runs with amount 5
    ran: list[dict[str, Any]] = []
    store = SQLiteStore(db)
    answers = asyncio.run(store.approvals.answers_for("pay"))
    assert transfer_agent(store, "pay", ran).resume(answers).text == "done: sent 5 to bob"
    assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]
    missing = cli("approvals", "deny", "apr_missing", "--store", db)
    assert missing.exit_code == 1
    assert f"no approval 'apr_missing' in {db}" in missing.stderr
    assert f"list them with: tether approvals list --all --store {db}" in missing.stderr
    unknown = cli("approvals", "show", "apr_missing", "--store", db)
    assert f"list them with: tether approvals list --all --store {db}" in unknown.stderr


def test_deny_respond_expire_and_list_all(db):
    ids = pending(db)
    denied = cli("approvals", "deny", ids["transfer"].id, "--note", "too much", "--store", db)
    assert denied.exit_code == 0
    assert f"denied {ids['transfer'].id} as " in denied.stdout
    answered = cli("approvals", "respond", ids["delete"].id, '"yes, go"', "--store", db)
    assert answered.exit_code == 0
    assert cli("approvals", "list", "--store", db).stdout.strip() == f"no pending approvals in {db}"
    everything = cli("approvals", "list", "--all", "--store", db)
    assert "denied" in everything.stdout
    assert "approved" in everything.stdout
    expired = cli("approvals", "expire", "--store", db)
    assert "0 approval(s) expired" in expired.stdout


def test_approvers_tokens_are_shown_once_and_stored_hashed(db):
    added = cli(
        "approvers", "add", "alice", "--role", "approve:transfer", "--role", "auditor",
        "--store", db,
    )  # fmt: skip
    assert added.exit_code == 0
    token = added.stdout.strip().splitlines()[-1]
    assert token.startswith("tether_")
    assert "role(s) approve:transfer, auditor" in added.stdout
    store = SQLiteStore(db)
    who = asyncio.run(store.approvers.verify(token))
    assert who is not None
    assert (who.name, who.roles) == ("alice", ("approve:transfer", "auditor"))
    assert (
        asyncio.run(store.approvers.verify(token[:-1] + ("x" if token[-1] != "x" else "y"))) is None
    )
    assert asyncio.run(store.approvers.verify("garbage")) is None
    secret = token.split("_", 2)[2]  # tether_<key id>_<secret>: the secret may hold "_"
    raw = Path(db).read_bytes() + Path(db + "-wal").read_bytes()
    assert secret.encode() not in raw
    dup = cli("approvers", "add", "alice", "--role", "viewer", "--store", db)
    assert dup.exit_code == 1
    assert "an approver named 'alice' already exists" in dup.stderr
    listed = cli("approvers", "list", "--store", db)
    assert "alice" in listed.stdout
    assert token not in listed.stdout
    assert cli("approvers", "remove", "alice", "--store", db).exit_code == 0
    assert asyncio.run(SQLiteStore(db).approvers.verify(token)) is None
    gone = cli("approvers", "remove", "alice", "--store", db)
    assert "no approver named 'alice'" in gone.stderr


def test_audit_verify_export_show_and_a_tampered_chain(db):
    ok = cli("audit", "verify", "--store", db)
    assert ok.exit_code == 0
    assert "audit log ok:" in ok.stdout
    head = ok.stdout.split("head ")[1].split()[0]
    assert cli("audit", "verify", "--expect-head", head, "--store", db).exit_code == 0
    exported = cli("audit", "export", "--format", "jsonl", "--store", db)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert SECRET not in exported.stdout
    assert cli("audit", "export", "--format", "csv", "--store", db).exit_code == 2
    shown = cli("audit", "show", "pay", "--store", db)
    for event in ("invocation.start", "policy.verdict", "approval.requested", "interrupt.raised"):
        assert event in shown.stdout
    assert "no audit records for session 'zzz'" in cli("audit", "show", "zzz", "--store", db).stdout
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE audit SET body = replace(body, 'pay', 'pax') WHERE seq = 2")
    conn.close()
    broken = cli("audit", "verify", "--store", db)
    assert broken.exit_code == 1
    assert "audit log BROKEN at record 2: record 2 was edited" in broken.stderr


def test_approvers_add_refuses_role_typos_and_names_the_valid_roles(db):
    for typo in ("aprove:*", "approve", "approve:", "Admin", "viewer "):
        bad = cli("approvers", "add", "bob", "--role", typo, "--store", db)
        assert bad.exit_code == 2, (typo, bad.output)
        assert repr(typo) in bad.stderr
        assert "Valid roles: approve:PATTERN" in bad.stderr
        assert "viewer, auditor, admin" in bad.stderr
    assert asyncio.run(SQLiteStore(db).approvers.all()) == []  # nothing was issued
    mixed = cli("approvers", "add", "bob", "--role", "viewer", "--role", "approve", "--store", db)
    assert mixed.exit_code == 2
    assert "'approve' needs a tool pattern: approve:PATTERN" in mixed.stderr
    custom = cli("approvers", "add", "bot", "--role", "deploy-bot", "--custom-role", "--store", db)
    assert custom.exit_code == 0, custom.output
    assert [a.roles for a in asyncio.run(SQLiteStore(db).approvers.all())] == [("deploy-bot",)]


def test_approvers_add_creates_a_missing_store(tmp_path: Path):
    db = tmp_path / "new.db"
    added = cli("approvers", "add", "alice", "--role", "approve:*", "--store", str(db))
    assert added.exit_code == 0, added.output
    token = added.stdout.strip().splitlines()[-1]
    assert asyncio.run(SQLiteStore(db).approvers.verify(token)) is not None
    nowhere = cli("approvers", "add", "al", "--role", "admin", "--store", str(tmp_path / "no/x.db"))
    assert nowhere.exit_code == 1
    assert f"no directory {tmp_path / 'no'}" in nowhere.stderr
    # readers still refuse to invent a store
    listed = cli("approvals", "list", "--store", str(tmp_path / "other.db"))
    assert listed.exit_code == 1
    assert "no tether store at" in listed.stderr
    assert not (tmp_path / "other.db").exists()


MYAPP = '''
from tether import Agent, tool
from tether.durable import MemoryStore
from tether.models import ScriptedModel


@tool
def transfer(to: str, amount: int, api_token: str) -> str:
    """Send money."""
    return "sent"


def make_agent(session_id):
    return Agent(model=ScriptedModel(["-"]), tools=[transfer], store=MemoryStore(),
                 session_id=session_id)
'''


def _tether(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop("TETHER_STORE", None)
    return subprocess.run(
        [TETHER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_approve_edit_loads_the_app_from_the_current_directory_and_checks_types_strictly(
    db, tmp_path: Path
):
    (tmp_path / "myapp.py").write_text(MYAPP)
    approval = pending(db)["transfer"]

    def approve_edited(edit: str, factory: str = "myapp:make_agent") -> Any:
        args = ("approvals", "approve", approval.id, "--edit", edit, "--app", factory)
        return _tether(*args, "--store", db, cwd=tmp_path)

    coerced = approve_edited('{"to": 42}')
    assert coerced.returncode == 1, coerced.stdout + coerced.stderr
    assert "cannot import" not in coerced.stderr
    assert "edited arguments for tool 'transfer' are invalid" in coerced.stderr
    assert "argument 'to': expected a string, got 42" in coerced.stderr
    as_text = approve_edited('{"amount": "5"}')
    assert as_text.returncode == 1
    assert "argument 'amount': expected an integer, got '5'" in as_text.stderr
    assert asyncio.run(SQLiteStore(db).approvals.get(approval.id)).status == "pending"
    unchecked = cli("approvals", "approve", approval.id, "--edit", '{"amount": 5}', "--store", db)
    assert unchecked.exit_code == 2
    assert "pass --app module:factory" in unchecked.stderr
    missing = approve_edited('{"amount": 5}', "nomodule:make")
    assert missing.returncode == 1
    assert "cannot import 'nomodule' for nomodule:make" in missing.stderr
    ok = approve_edited('{"amount": 5}')
    assert ok.returncode == 0, ok.stdout + ok.stderr
    decided = asyncio.run(SQLiteStore(db).approvals.get(approval.id))
    assert (decided.status, decided.edited_args) == ("approved", {"amount": 5})


def test_help_shows_the_server_extra_literally():
    root = CliRunner(env={**ENV, "COLUMNS": "200"}).invoke(app, ["--help"])
    assert "(needs tether)" not in root.stdout
    serve = CliRunner(env={**ENV, "COLUMNS": "200"}).invoke(app, ["serve", "--help"])
    assert "pip install -e '.[server]'" in serve.stdout


def test_list_at_80_columns_keeps_ids_whole_and_json_lines(db):
    narrow = CliRunner(env={**ENV, "COLUMNS": "80"}).invoke(
        app, ["approvals", "list", "--store", db]
    )
    assert narrow.exit_code == 0
    for approval in pending(db).values():
        assert any(approval.id in line for line in narrow.stdout.splitlines()), narrow.stdout
    lines = cli("approvals", "list", "--json", "--all", "--store", db).stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    assert sorted(r["tool"] or r["name"] for r in rows) == ["delete", "transfer"]
    assert {r["id"] for r in rows} == {a.id for a in pending(db).values()}
    assert SECRET not in "".join(lines)
    one = pending(db)["transfer"]
    shown = json.loads(cli("approvals", "show", one.id, "--json", "--store", db).stdout)
    assert shown == one.to_dict()
    assert cli("approvals", "list", "--json", "--session", "zzz", "--store", db).stdout == ""


def test_audit_verify_says_when_the_expected_head_is_malformed(db):
    ok = cli("audit", "verify", "--store", db)
    head = ok.stdout.split("head ")[1].split()[0]
    seq, digest = head.split(":")
    for typo in (
        "3:abc",
        f"{seq}{digest}",
        f"x:{digest}",
        f"{seq}:{digest.upper()}",
        f"0:{digest}",
    ):
        bad = cli("audit", "verify", "--expect-head", typo, "--store", db)
        assert bad.exit_code == 2, (typo, bad.output)
        assert f"{typo!r} is not a chain head: use SEQ:HASH" in bad.stderr
        assert "rewritten" not in bad.stderr
    other = "0" * 64
    rewritten = cli("audit", "verify", "--expect-head", f"{seq}:{other}", "--store", db)
    assert rewritten.exit_code == 1
    assert "the chain was rewritten" in rewritten.stderr


def test_a_record_moved_to_another_session_breaks_verify_with_the_expected_head(db):
    ok = cli("audit", "verify", "--store", db)
    head = ok.stdout.split("head ")[1].split()[0]
    before = cli("audit", "show", "pay", "--store", db).stdout
    assert "approval.requested" in before
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE audit SET session_id = 'zz' WHERE session_id = 'pay' "
            "AND event = 'approval.requested'"
        )
    conn.close()
    assert "approval.requested" not in cli("audit", "show", "pay", "--store", db).stdout
    broken = cli("audit", "verify", "--expect-head", head, "--store", db)
    assert broken.exit_code == 1
    assert "session_id column is 'zz' but its hashed body says 'pay'" in broken.stderr


@pytest.mark.parametrize(
    ("damage", "detail"),
    [("DELETE FROM audit_head", "missing"), ("UPDATE audit_head SET hash = 'x'", "corrupt")],
)
def test_verify_on_a_missing_or_garbled_head_is_a_clear_error(db, damage, detail):
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(damage)
    conn.close()
    out = cli("audit", "verify", "--store", db)
    assert out.exit_code == 1
    assert f"error: the audit head (table audit_head, row id 1) is {detail}" in out.stderr
    assert "Restore the store from a backup" in out.stderr
    assert "TypeError" not in out.output
    assert "ValueError" not in out.output
    assert "approval.requested" in cli("audit", "show", "pay", "--store", db).stdout
