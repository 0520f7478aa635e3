"""``tether memory list|show|remove``: the memory tool's entries for operators, on SQLite
and PostgreSQL (a MemoryStore has no URL), escaped and redacted, with ``--json``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from ops_cli import cli

from tether.durable import PostgresStore, SQLiteStore, Store
from tether.durable.memory_entries import MemoryCaps

CAPS = MemoryCaps()


def url_of(dsn: str) -> str:
    """A postgresql:// URL for the fixture's key=value DSN (its search_path in the query)."""
    from psycopg.conninfo import conninfo_to_dict

    info = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    user = quote(info.pop("user", ""), safe="")
    if "password" in info:
        user += ":" + quote(info.pop("password"), safe="")
    host, port = info.pop("host", "localhost"), info.pop("port", "5432")
    dbname = quote(info.pop("dbname", ""), safe="")
    if host.startswith("/"):
        info["host"], host = host, ""
    return f"postgresql://{user + '@' if user else ''}{host}:{port}/{dbname}?{urlencode(info)}"


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, str]:
    """A store factory and the --store URL of the same database."""
    if request.param == "sqlite":
        path = tmp_path / "memory.db"
        return (lambda: SQLiteStore(path)), str(path)
    dsn = request.getfixturevalue("pg_dsn")
    return (lambda: PostgresStore(dsn)), url_of(dsn)


def fill(make: Any, *texts: tuple[str, str]) -> list[str]:
    async def go() -> list[str]:
        store: Store = make()
        try:
            ids = []
            for scope, text in texts:
                entry = (await store.memory_entries.add(scope, text, CAPS)).entry
                assert entry is not None
                ids.append(entry.id)
            return ids
        finally:
            await store.close()

    return asyncio.run(go())


def test_list_show_and_remove_with_and_without_json(where: tuple[Any, str]) -> None:
    make, url = where
    tea, oslo, _ = fill(
        make, ("user:1", "likes tea"), ("user:1", "lives in Oslo"), ("user:2", "likes coffee")
    )
    scopes = cli("memory", "list", "--store", url, "--json")
    assert scopes.exit_code == 0, scopes.output
    assert [json.loads(line) for line in scopes.stdout.splitlines()] == [
        {"scope": "user:1", "entries": 2, "chars": len("likes tea") + len("lives in Oslo")},
        {"scope": "user:2", "entries": 1, "chars": len("likes coffee")},
    ]
    listed = cli("memory", "list", "--scope", "user:1", "--store", url, "--json")
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["id"], r["text"], r["scope"]) for r in rows] == [
        (tea, "likes tea", "user:1"),
        (oslo, "lives in Oslo", "user:1"),
    ]
    table = cli("memory", "list", "--scope", "user:1", "--store", url)
    assert "2 entries" in table.stdout
    assert tea in table.stdout
    assert "lives in Oslo" in table.stdout
    shown = cli("memory", "show", oslo, "--scope", "user:1", "--store", url, "--json")
    assert json.loads(shown.stdout)["text"] == "lives in Oslo"
    removed = cli("memory", "remove", tea, "--scope", "user:1", "--store", url, "--json")
    assert removed.exit_code == 0, removed.output
    assert json.loads(removed.stdout) | {"created_at": 0, "updated_at": 0} == {
        "removed": True,
        "scope": "user:1",
        "id": tea,
        "text": "likes tea",
        "created_at": 0,
        "updated_at": 0,
    }
    again = cli("memory", "remove", tea, "--scope", "user:1", "--store", url)
    assert again.exit_code == 1
    assert f"no memory entry '{tea}' in scope 'user:1'" in again.stderr
    missing = cli("memory", "show", tea, "--scope", "user:1", "--store", url)
    assert missing.exit_code == 1

    async def audit() -> list[Any]:
        store: Store = make()
        try:
            return await store.audit.records()
        finally:
            await store.close()

    [record] = [r for r in asyncio.run(audit()) if r.event == "memory.written"]
    assert record.data == {"scope": "user:1", "entry_id": tea, "action": "remove", "by": "cli"}


def test_entries_are_escaped_and_redacted_in_every_output(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    # written around the tool (which refuses both): the CLI still shows them safely
    [hostile] = fill(
        lambda: SQLiteStore(path),
        ("u", "note \x1b[2J\u202e token=abcd1234efgh and [bold]markup[/bold]"),
    )
    for args in (
        ("list", "--scope", "u"),
        ("show", hostile, "--scope", "u"),
        ("list",),
    ):
        out = cli("memory", *args, "--store", str(path))
        assert out.exit_code == 0, out.output
        assert not any(c in out.stdout for c in "\x1b\u202e")
        assert "abcd1234efgh" not in out.stdout
    shown = cli("memory", "show", hostile, "--scope", "u", "--store", str(path))
    assert "token=***" in shown.stdout
    assert "[bold]markup[/bold]" in shown.stdout  # shown as text, never as markup
    as_json = cli("memory", "show", hostile, "--scope", "u", "--store", str(path), "--json")
    assert "\x1b" not in as_json.stdout
    assert json.loads(as_json.stdout)["text"] == (
        "note \x1b[2J\u202e token=*** and [bold]markup[/bold]"
    )
