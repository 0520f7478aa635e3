"""store.memory_entries on all three stores: add / replace / remove / list, caps checked
in the write's transaction, the schema migration that adds them."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tether.durable import PostgresStore, SQLiteStore
from tether.durable.memory_entries import MemoryCaps, Usage
from tether.durable.schema import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
from tether.durable.store import STORE_SCHEMA
from tether.errors import InputError

CAPS = MemoryCaps(entries=3, entry_chars=20, total_chars=30)


async def test_add_replace_remove_and_list_keep_ids_and_order(stores) -> None:  # type: ignore[no-untyped-def]
    memory = stores().memory_entries
    first = (await memory.add("user:1", "likes tea", CAPS)).entry
    second = (await memory.add("user:1", "lives in Oslo", CAPS)).entry
    other = (await memory.add("user:2", "likes coffee", CAPS)).entry
    assert first
    assert second
    assert other
    assert len({first.id, second.id}) == 2
    assert len(first.id) == 8
    # another store object on the same database (as another process) sees them
    again = stores().memory_entries
    assert [e.text for e in await again.entries("user:1")] == ["likes tea", "lives in Oslo"]
    assert await again.get("user:1", first.id) == first
    assert await again.get("user:2", first.id) is None  # ids are per scope
    written = await again.replace("user:1", first.id, "likes green tea", CAPS)
    assert written.entry is not None
    assert written.entry.created_at == first.created_at
    assert written.usage == Usage(2, len("likes green tea") + len("lives in Oslo"))
    assert (await memory.get("user:1", first.id)).text == "likes green tea"  # type: ignore[union-attr]
    assert (await memory.remove("user:1", second.id)) == second
    assert await memory.remove("user:1", second.id) is None
    assert [e.id for e in await memory.entries("user:1")] == [first.id]
    assert await memory.scopes() == [
        ("user:1", Usage(1, len("likes green tea"))),
        ("user:2", Usage(1, len("likes coffee"))),
    ]
    missing = await memory.replace("user:1", "nope", "x", CAPS)
    assert (missing.entry, missing.missing) == (None, True)


async def test_a_write_over_a_cap_writes_nothing_and_reports_the_usage(stores) -> None:  # type: ignore[no-untyped-def]
    memory = stores().memory_entries
    for text in ("a" * 10, "b" * 10):
        assert (await memory.add("s", text, CAPS)).entry is not None
    over = await memory.add("s", "c" * 11, CAPS)  # 31 characters in all: one too many
    assert (over.entry, over.usage) == (None, Usage(2, 20))
    assert (await memory.add("s", "c" * 10, CAPS)).entry is not None
    kept = (await memory.entries("s"))[0]
    grown = await memory.replace("s", kept.id, "a" * 11, CAPS)
    assert (grown.entry, grown.usage) == (None, Usage(3, 30))
    full = await memory.add("s", "d", CAPS)  # a fourth entry: the entry cap
    assert (full.entry, full.usage) == (None, Usage(3, 30))
    assert [e.text for e in await memory.entries("s")] == ["a" * 10, "b" * 10, "c" * 10]
    with pytest.raises(InputError, match="at most 20 characters, got 21"):
        await memory.add("s", "x" * 21, CAPS)
    with pytest.raises(InputError, match="a memory scope has 1 to 200 characters, got 0"):
        await memory.add("", "x", CAPS)
    with pytest.raises(InputError, match="no control characters"):
        await memory.entries("a\x1bb")


async def test_concurrent_writers_cannot_pass_the_caps_together(stores) -> None:  # type: ignore[no-untyped-def]
    made = [stores() for _ in range(3)]
    caps = MemoryCaps(entries=4, entry_chars=10, total_chars=100)
    outcomes = await asyncio.gather(
        *(made[n % 3].memory_entries.add("race", f"entry {n}", caps) for n in range(9))
    )
    assert sum(1 for o in outcomes if o.entry is not None) == 4
    assert len(await made[0].memory_entries.entries("race")) == 4


def test_caps_must_be_positive() -> None:
    with pytest.raises(InputError, match=r"MemoryCaps.total_chars is a positive int, got 0"):
        MemoryCaps(total_chars=0)


def _memory_migration(migrations: tuple[tuple[str, ...], ...]) -> int:
    """The index of the migration that creates memory_entries (the lead renumbers)."""
    return next(i for i, m in enumerate(migrations) if any("memory_entries" in s for s in m))


async def test_a_sqlite_store_from_before_memory_upgrades_and_keeps_its_sessions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    before = _memory_migration(SQLITE_MIGRATIONS)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        for version in range(before):
            for statement in SQLITE_MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO tether_schema VALUES (?)", (version + 1,))
        conn.execute(
            "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
            "VALUES ('kept', 1, 'completed', 1.0, 2.0, '{\"who\":\"me\"}')"
        )
        conn.execute(
            "INSERT INTO entries (session_id, seq, kind, schema, at, data) "
            "VALUES ('kept', 1, 'message', 1, 1.5, '{\"i\":1}')"
        )
    conn.close()
    store = SQLiteStore(path)
    try:
        record = await store.load("kept")
        assert record is not None
        assert record.metadata == {"who": "me"}
        assert [e.data for e in record.entries] == [{"i": 1}]
        assert (await store.memory_entries.add("u", "remember me", CAPS)).entry is not None
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] == STORE_SCHEMA
    conn.close()


async def test_a_postgres_store_from_before_memory_upgrades_and_keeps_its_sessions(
    pg_dsn: str,
) -> None:
    psycopg: Any = pytest.importorskip("psycopg")
    before = _memory_migration(POSTGRES_MIGRATIONS)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        for version in range(before):
            for statement in POSTGRES_MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO tether_schema VALUES (%s)", (version + 1,))
        conn.execute(
            "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
            "VALUES ('kept', 1, 'completed', 1.0, 2.0, '{\"who\":\"me\"}')"
        )
        conn.execute(
            "INSERT INTO entries (session_id, seq, kind, schema, at, data) "
            "VALUES ('kept', 1, 'message', 1, 1.5, '{\"i\":1}')"
        )
    store = PostgresStore(pg_dsn)
    try:
        record = await store.load("kept")
        assert record is not None
        assert record.metadata == {"who": "me"}
        assert [e.data for e in record.entries] == [{"i": 1}]
        assert (await store.memory_entries.add("u", "remember me", CAPS)).entry is not None
    finally:
        await store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        found = conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0]
        assert found == STORE_SCHEMA
