"""The approval of an MCP tool call names its server as a field: store, CLI, API, inbox page."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, server_page
from live_server import call, live_server
from typer.testing import CliRunner

from tether import Agent
from tether.durable import SQLiteStore
from tether.mcp import ConfirmDestructive, MCPServer
from tether.models import ScriptedModel
from tether.ops.cli import app
from tether.ops.server import create_app

from .conftest import FIXTURE

SERVER = "files\u202e.evil"  # a server label with a bidi override: shown escaped
CLI_ENV: dict[str, str | None] = {"COLUMNS": "250", "NO_COLOR": "1", "TETHER_STORE": None}


def suspend_on_a_write(db: Path, target: Path) -> None:
    def script(messages: list[Any], specs: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": "slow_write", "args": {"path": str(target)}}]}
        return "done"

    with MCPServer.stdio(
        sys.executable, [FIXTURE, "stdio"], name=SERVER, allow=["slow_write", "echo"]
    ) as server:
        agent = Agent(
            ScriptedModel(script),
            tools=[server],
            interventions=[ConfirmDestructive()],
            store=SQLiteStore(db),
            session_id="mcp-1",
        )
        assert agent("write it").stop_reason == "interrupt"


@pytest.fixture
def suspended(tmp_path: Path) -> Path:
    db = tmp_path / "approvals.db"
    suspend_on_a_write(db, tmp_path / "out.txt")
    return db


def test_the_approval_row_carries_the_server_of_the_tool(suspended):
    (approval,) = asyncio.run(SQLiteStore(suspended).approvals.pending())
    assert approval.tool == "slow_write"
    assert approval.server == SERVER
    records = asyncio.run(SQLiteStore(suspended).audit.records("mcp-1"))
    (requested,) = [r for r in records if r.event == "approval.requested"]
    assert requested.data["server"] == SERVER


def test_the_cli_shows_the_server_as_its_own_field_escaped(suspended):
    runner = CliRunner(env=CLI_ENV)
    listed = runner.invoke(app, ["approvals", "list", "--wide", "--store", str(suspended)])
    assert listed.exit_code == 0, listed.output
    header = next(line for line in listed.stdout.splitlines() if "arguments (redacted)" in line)
    columns = [c.strip() for c in header.split("\u2503") if c.strip()]
    assert columns[2:4] == ["tool", "server"]
    assert "files\\u202e.evil" in listed.stdout
    assert "\u202e" not in listed.stdout
    (approval,) = asyncio.run(SQLiteStore(suspended).approvals.pending())
    shown = runner.invoke(app, ["approvals", "show", approval.id, "--store", str(suspended)])
    assert shown.exit_code == 0, shown.output
    fields = dict(line.split(None, 1) for line in shown.stdout.splitlines() if line.strip())
    assert fields["server"].strip() == "files\\u202e.evil"
    as_json = runner.invoke(app, ["approvals", "list", "--store", str(suspended), "--json"])
    assert json.loads(as_json.stdout)["server"] == SERVER


def test_the_api_and_the_inbox_page_show_the_server(suspended):
    store = SQLiteStore(suspended)
    token = asyncio.run(store.approvers.add("admin", ["admin"])).token
    with live_server(create_app(SQLiteStore(suspended), close_store=True)) as url:
        status, body = call("GET", f"{url}/api/approvals", token)
        assert status == 200
        (approval,) = body["approvals"]
        assert (approval["tool"], approval["server"]) == ("slow_write", SERVER)
        status, schema = call("GET", f"{url}/openapi.json", token)
        assert "server" in schema["components"]["schemas"]["Approval"]["properties"]
        if HAVE_CHROMIUM:
            asyncio.run(_page_shows(url, token, approval["id"]))


async def _page_shows(url: str, token: str, approval_id: str) -> None:
    async with server_page(url, width=1280, height=900) as page:
        await page.goto(url + "/")
        await page.fill("#token", token)
        await page.click("#signin")
        row = page.locator(f"#approvals tr[data-id='{approval_id}']")
        await row.wait_for()
        assert await row.locator("td.server").inner_text() == "files\\u202e.evil"
        await row.locator("button.open").click()
        await page.wait_for_selector("#transcript li.here")
        assert await page.inner_text("#d-server") == "files\\u202e.evil"


async def test_a_store_from_before_the_server_column_is_upgraded_keeping_its_approvals(tmp_path):
    import sqlite3

    from tether.durable.approval_types import APPROVAL_COLS, Approval, approval_row
    from tether.durable.schema import SQLITE_MIGRATIONS
    from tether.durable.store import STORE_SCHEMA

    path = tmp_path / "v2.db"
    old = Approval(
        "apr_1", "s", "i", "intervention", "confirm", "t", {}, None, "ok?", 1.0, None, "deny"
    )
    v2_cols = APPROVAL_COLS.removesuffix(", server")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        for version in (0, 1):
            for statement in SQLITE_MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO tether_schema VALUES (?)", (version + 1,))
        conn.execute(
            f"INSERT INTO approvals ({v2_cols}) VALUES ({', '.join('?' * 19)})",
            approval_row(old)[:19],
        )
    conn.close()
    store = SQLiteStore(path)
    try:
        assert await store.approvals.get("apr_1") == old  # server None
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] == STORE_SCHEMA
    conn.close()
