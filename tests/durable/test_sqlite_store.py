"""SQLiteStore specifics: file settings, unusable paths, schema versions, durable commits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tether.durable import SchemaTooNew, SQLiteStore, StoreError, StoreUnavailable
from tether.durable.schema import SQLITE_MIGRATIONS
from tether.durable.store import STORE_SCHEMA


def test_migrations_match_the_schema_version() -> None:
    assert len(SQLITE_MIGRATIONS) == STORE_SCHEMA


async def test_file_uses_wal_and_records_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    await store.create("s")
    await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] == STORE_SCHEMA


async def test_durable_append_restores_normal_sync(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "t.db")
    await store.create("s")
    await store.append("s", 0, [("tool_intent", {"id": "c1"})], durable=True)
    conn = store._conn
    assert conn is not None
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    await store.close()


async def test_opening_is_lazy_and_reopens_after_close(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    assert not path.exists()
    await store.create("s")
    await store.close()
    assert (await store.load("s")) is not None
    await store.close()


@pytest.mark.parametrize("kind", ["parent-is-a-file", "is-a-directory", "not-a-database"])
async def test_unusable_path_is_a_clear_store_error(tmp_path: Path, kind: str) -> None:
    blocker = tmp_path / "blocker"
    if kind == "parent-is-a-file":
        blocker.write_text("x")
        path = blocker / "tether.db"
    elif kind == "is-a-directory":
        blocker.mkdir()
        path = blocker
    else:
        blocker.write_bytes(b"this is not sqlite" * 100)
        path = blocker
    store = SQLiteStore(path)
    with pytest.raises(StoreUnavailable) as info:
        await store.create("s")
    message = str(info.value)
    assert str(path) in message
    if kind == "not-a-database":  # what to do differs: point at a store, not at permissions
        assert "is not an SQLite database" in message
        assert "pass the path of a tether store" in message
    else:
        assert "writable" in message
    assert isinstance(info.value, StoreError)


async def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    await store.create("s")
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO tether_schema (version) VALUES (?)", (STORE_SCHEMA + 1,))
    with pytest.raises(SchemaTooNew) as info:
        await SQLiteStore(path).load("s")
    err = info.value
    assert (err.found, err.known) == (STORE_SCHEMA + 1, STORE_SCHEMA)
    assert "upgrade tether" in str(err)
    assert str(STORE_SCHEMA + 1) in str(err)


async def test_locked_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path, busy_timeout=0.05)
    await store.create("s")
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="locked"):
            await store.append("s", 0, [("message", {})])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert await store.append("s", 0, [("message", {})])
    await store.close()
