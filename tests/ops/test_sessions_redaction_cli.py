"""`tether sessions show|export` and `tether approvals` show a session through the one
redaction path (as the API does); `--unredacted` asks for the real values explicitly."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ops_agents import SECRET, transfer_agent
from ops_cli import cli
from redacting_agents import ACCOUNT, AMOUNT, PAYEE, redacting_agent

from tether.durable import SQLiteStore


def run(agent_of: Any, path: Path, session: str, ran: list[Any] | None = None) -> None:
    store = SQLiteStore(path)
    agent_of(store, session, [] if ran is None else ran)("pay")
    asyncio.run(store.close())


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "r.db"
    run(transfer_agent, path, "pay")
    run(redacting_agent, path, "pay-r")
    return str(path)


def test_show_masks_what_the_approvals_mask(db: str) -> None:
    out = cli("sessions", "show", "pay", "--store", db, "--full")
    assert out.exit_code == 0
    assert SECRET not in out.stdout  # it was printed in the transcript and the interrupt
    assert '"api_token": "***"' in out.stdout
    assert "send 500 to bob using ***?" in out.stdout  # the reason is scrubbed too


def test_show_applies_the_custom_redactor_of_the_session(db: str) -> None:
    learned = cli("sessions", "show", "pay-r", "--store", db, "--full")
    assert learned.exit_code == 0
    for value in (PAYEE, str(AMOUNT), SECRET):  # masked by the approval row: masked everywhere
        assert value not in learned.stdout, value
    assert "paying ***" in learned.stdout
    with_app = cli(
        "sessions", "show", "pay-r", "--store", db, "--full", "--app", "redacting_agents:make_agent"
    )
    assert with_app.exit_code == 0
    for value in (PAYEE, str(AMOUNT), SECRET, ACCOUNT):  # the redactor itself: lookup too
        assert value not in with_app.stdout, value
    assert '{"account": "***"}' in with_app.stdout
    bad = cli("sessions", "show", "pay-r", "--store", db, "--app", "nosuchmodule:make")
    assert bad.exit_code == 2
    assert "nosuchmodule" in bad.output


def test_export_is_redacted_unless_unredacted_is_asked(db: str) -> None:
    out = cli("sessions", "export", "pay-r", "--store", db, "--app", "redacting_agents:make_agent")
    assert out.exit_code == 0
    for value in (PAYEE, SECRET, ACCOUNT):
        assert value not in out.stdout, value
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    calls = [c for r in rows for c in r.get("tool_calls") or []]
    assert json.loads(calls[-1]["function"]["arguments"]) == {
        "to": "***",
        "amount": "***",
        "api_token": "***",
    }
    raw = cli("sessions", "export", "pay-r", "--store", db, "--unredacted")
    assert raw.exit_code == 0
    assert SECRET in raw.stdout
    assert PAYEE in raw.stdout
    assert "shown UNREDACTED (--unredacted)" in raw.stderr
    shown = cli("sessions", "show", "pay", "--store", db, "--unredacted", "--full")
    assert SECRET in shown.stdout


def test_show_marks_the_edited_arguments_that_ran_and_who_edited(db: str) -> None:
    [approval] = asyncio.run(_pending(db, "pay"))
    edit = cli(
        "approvals", "approve", approval, "--edit", '{"amount": 7}', "--as", "alice",
        "--app", "ops_agents:validating_agent", "--store", db,
    )  # fmt: skip
    assert edit.exit_code == 0, edit.output
    ran: list[dict[str, Any]] = []

    async def resume() -> None:
        store = SQLiteStore(db)
        answers = await store.approvals.answers_for("pay")
        await transfer_agent(store, "pay", ran).resume_async(answers)
        await store.close()

    asyncio.run(resume())
    assert ran == [{"to": "bob", "amount": 7, "api_token": SECRET}]
    out = cli("sessions", "show", "pay", "--store", db, "--full")
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    [at] = [i for i, line in enumerate(lines) if "→ transfer(" in line]
    assert '"amount": 500' in lines[at]
    assert "ran with edited arguments (by alice at" in lines[at + 1]
    shown = json.loads(lines[at + 1].split("): ", 1)[1])
    assert shown == {"to": "bob", "amount": 7, "api_token": "***"}
    assert "sent 7 to bob" in out.stdout
    assert SECRET not in out.stdout


async def _pending(db: str, session: str) -> list[str]:
    store = SQLiteStore(db)
    try:
        return [a.id for a in await store.approvals.pending(session_id=session)]
    finally:
        await store.close()


def test_edited_secrets_are_refused_and_old_rows_are_shown_masked(db: str) -> None:
    [approval] = asyncio.run(_pending(db, "pay"))
    refused = cli(
        "approvals", "approve", approval, "--edit", '{"api_token": "sk-typed-by-hand-99"}',
        "--app", "ops_agents:validating_agent", "--store", db,
    )  # fmt: skip
    assert refused.exit_code == 1
    assert "edited arguments may not set 'api_token'" in refused.stderr
    assert "Leave them as shown ('***')" in refused.stderr
    assert "pending" in cli("approvals", "show", approval, "--store", db).stdout
    kept = cli(
        "approvals", "approve", approval, "--edit", '{"api_token": "***", "amount": 9}',
        "--app", "ops_agents:validating_agent", "--store", db,
    )  # fmt: skip
    assert kept.exit_code == 0, kept.output
    assert asyncio.run(_edited(db, approval)) == {"amount": 9}  # "***" kept the real token
    # a row written before edits were checked: shown masked all the same
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE approvals SET edited_args = ? WHERE id = ?",
            (json.dumps({"amount": 9, "api_token": "sk-old-row-secret"}), approval),
        )
    conn.close()
    shown = cli("approvals", "show", approval, "--store", db)
    assert "sk-old-row-secret" not in shown.stdout
    assert '"api_token": "***"' in shown.stdout


async def _edited(db: str, approval_id: str) -> Any:
    store = SQLiteStore(db)
    try:
        return (await store.approvals.get(approval_id)).edited_args
    finally:
        await store.close()
