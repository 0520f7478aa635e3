"""``tether sessions search``: ranked, redacted hits on SQLite and PostgreSQL, escaped on a
terminal, one JSON object per line with ``--json``; bad input is an error message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from ops_agents import SECRET, transfer_agent
from ops_cli import cli
from worker_testing import pg_url

from tether import Agent
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel


async def _fill(store: Store) -> None:
    await transfer_agent(store, "pay", []).invoke_async(f"pay bob the invoice with {SECRET}")
    await Agent(model=ScriptedModel(["paid"]), store=store, session_id="hi").invoke_async(
        "the invoice \x1b[2J\u202eevil"
    )
    await Agent(model=ScriptedModel(["ok"]), store=store, session_id="other").invoke_async("lunch")
    await store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        url = str(tmp_path / "s.db")
        asyncio.run(_fill(SQLiteStore(url)))
    else:
        dsn = request.getfixturevalue("pg_dsn")
        asyncio.run(_fill(PostgresStore(dsn)))
        url = pg_url(dsn)
    return url


def _json(url: str, *args: str) -> list[dict[str, Any]]:
    out = cli("sessions", "search", *args, "--store", url, "--json")
    assert out.exit_code == 0, out.output
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_search_table_is_ranked_redacted_and_escaped(store_url: str) -> None:
    out = cli("sessions", "search", "invoice bob", "--store", store_url)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    rows = [line for line in lines if line.startswith("│")]
    assert rows[0].split("│")[2].strip() == "pay"  # both words
    assert "pay bob the invoice with ***" in out.stdout
    assert "the invoice \\x1b[2J\\u202eevil" in out.stdout  # visible, never obeyed
    assert "\x1b" not in out.stdout
    assert "\u202e" not in out.stdout
    assert SECRET not in out.stdout
    assert "other" not in out.stdout


def test_search_json_scope_limit_and_the_secret_itself(store_url: str) -> None:
    hits = _json(store_url, "invoice")
    assert {h["session_id"] for h in hits} == {"pay", "hi"}
    assert {h["role"] for h in hits} == {"user"}
    assert all(SECRET not in h["snippet"] for h in hits)
    assert [h["session_id"] for h in _json(store_url, "invoice", "--scope", "h*")] == ["hi"]
    assert len(_json(store_url, "invoice", "--limit", "1")) == 1
    assert _json(store_url, SECRET) == []  # the index holds it; the search never confirms it
    assert _json(store_url, "4f9a8b7c6d5e") == []


def test_bad_queries_are_messages_not_tracebacks(store_url: str) -> None:
    out = cli("sessions", "search", "x" * 501, "--store", store_url)
    assert out.exit_code == 1
    assert "error: the search query is 501 characters long; at most 500 are allowed" in out.output
    out = cli("sessions", "search", '"unbalanced NEAR(', "--store", store_url, "--json")
    assert out.exit_code == 0, out.output
    assert out.stdout == ""
    out = cli("sessions", "search", "zzz", "--store", store_url)
    assert "no session in" in out.stdout
    assert "matches 'zzz'" in out.stdout


def test_search_reads_a_closed_sqlite_store_without_writing_to_it(tmp_path: Path) -> None:
    import hashlib

    db = tmp_path / "closed.db"
    asyncio.run(_fill(SQLiteStore(db)))
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["closed.db"]
    assert {h["session_id"] for h in _json(str(db), "invoice")} == {"pay", "hi"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["closed.db"]  # no -wal, no -shm
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
