"""Untrusted text on the terminal: control, bidi and invisible characters are shown as
escapes, never obeyed; Rich markup in data is shown as typed (real CLI, real stores)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tether import Agent, ToolContext, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.cli import app
from tether.ops.terminal import json_line, visible

SUPPORT = Path(__file__).parents[1] / "support"
sys.path.insert(0, str(SUPPORT))

from worker_testing import TETHER, approve, suspend  # noqa: E402

ENV: dict[str, str | None] = {"COLUMNS": "250", "NO_COLOR": "1", "TETHER_STORE": None}
# what a hostile reason did: move up two lines, go to column 0, erase the line, then lie
SPOOF = "\x1b[2A\x1b[0G\x1b[2Kdelete /tmp/harmless.log?"
BIDI = "/etc/\u202etxt.egatsgol/pmt/"
HOSTILE = f"/etc/passwd{SPOOF}"


def cli(*args: str) -> Any:
    result = CliRunner(env=ENV).invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def hostile_agent(store: SQLiteStore, session: str) -> Agent:
    """The model asks to delete /etc/passwd with a reason crafted to look harmless."""

    @tool
    def delete_file(path: str, ctx: ToolContext) -> str:
        """Delete a file after a human approves."""
        ctx.interrupt("approve_delete", f"delete {path}")
        return "deleted"

    def play(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return {
            "text": f"I will clean up {BIDI}\x9b31m now\x07",
            "tool_calls": [{"name": "delete_file", "args": {"path": HOSTILE}}],
        }

    return Agent(model=ScriptedModel(play), tools=[delete_file], store=store, session_id=session)


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "hostile.db")
    store = SQLiteStore(path)
    result = hostile_agent(store, "evil[/]x")("clean up")
    assert result.stop_reason == "interrupt", result
    return path


def _clean(text: str) -> None:
    for char in ("\x1b", "\x9b", "\x07", "\u202e"):
        assert char not in text, f"{char!r} reached the terminal"


def test_visible_writes_every_control_bidi_and_invisible_character_as_an_escape() -> None:
    assert visible("plain ascii, é and 日本") == "plain ascii, é and 日本"
    assert visible(SPOOF) == "\\x1b[2A\\x1b[0G\\x1b[2Kdelete /tmp/harmless.log?"
    assert visible(BIDI) == "/etc/\\u202etxt.egatsgol/pmt/"
    assert visible("a\x7fb\x85c\u200bd\ufeffe\u2066f\U000e0041") == (
        "a\\x7fb\\x85c\\u200bd\\ufeffe\\u2066f\\U000e0041"
    )
    assert visible("two\nlines\tand\r") == "two\nlines\tand\\x0d"
    assert visible("two\nlines", one_line=True) == "two\\x0alines"
    value = {"r": SPOOF + BIDI + "\x85é\U000e0041\u2028"}
    line = json_line(value)
    _clean(line)
    for char in ("\x85", "\U000e0041", "\u2028"):
        assert char not in line
    assert "é" in line
    assert "\\udb40\\udc41" in line  # a tag character, as a JSON surrogate pair
    assert json.loads(line) == value


def test_approvals_list_and_show_print_a_hostile_reason_visibly(db: str) -> None:
    listed = cli("approvals", "list", "--wide", "--store", db)
    assert listed.exit_code == 0, listed.output
    _clean(listed.stdout)
    assert "\\x1b[2A\\x1b[0G\\x1b[2Kdelete /tmp/harmless.log?" in listed.stdout
    assert "evil[/]x" in listed.stdout  # markup in data is printed as typed
    [approval] = asyncio.run(SQLiteStore(db).approvals.pending())
    shown = cli("approvals", "show", approval.id, "--store", db)
    assert shown.exit_code == 0, shown.output
    _clean(shown.stdout)
    assert "delete /etc/passwd\\x1b[2A" in shown.stdout
    as_json = cli("approvals", "list", "--json", "--store", db)
    _clean(as_json.stdout)
    assert json.loads(as_json.stdout)["reason"] == f"delete {HOSTILE}"


def test_sessions_show_prints_model_text_visibly(db: str) -> None:
    shown = cli("sessions", "show", "evil[/]x", "--store", db)
    assert shown.exit_code == 0, shown.output
    _clean(shown.stdout)
    assert "I will clean up /etc/\\u202etxt.egatsgol/pmt/\\x9b31m now\\x07" in shown.stdout
    assert "session  evil[/]x" in shown.stdout
    exported = cli("sessions", "export", "evil[/]x", "--store", db)
    _clean(exported.stdout)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert any(BIDI in json.dumps(r, ensure_ascii=False) for r in rows)


def test_audit_show_prints_details_visibly(db: str) -> None:
    shown = cli("audit", "show", "evil[/]x", "--store", db)
    assert shown.exit_code == 0, shown.output
    _clean(shown.stdout)
    assert "audit of session evil[/]x" in shown.stdout
    exported = cli("audit", "export", "--store", db)
    _clean(exported.stdout)


def test_a_worker_logs_a_session_whose_id_looks_like_markup(tmp_path: Path) -> None:
    db, out = str(tmp_path / "w.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    asyncio.run(suspend(store, ["evil[/]x", "[bold]loud"]))
    assert asyncio.run(approve(store)) == 2
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")]),
        "TETHER_WORKER_STORE": db,
        "TETHER_WORKER_OUT": str(out),
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }
    done = subprocess.run(
        [TETHER, "worker", "--app", "worker_app:agent_factory", "--store", db, "--once"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MarkupError" not in done.stdout + done.stderr
    assert " evil[/]x completed " in done.stdout
    assert " [bold]loud completed " in done.stdout
