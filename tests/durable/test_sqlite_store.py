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


# -- read-only opening ----------------------------------------------------------------


def _fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


async def test_read_only_reads_everything_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SQLiteStore(path)
    await store.create("s")
    await store.append("s", 0, [("tool_intent", {"call_id": "c1", "name": "x"})])
    await store.audit.append("test.note", {"n": 1}, session_id="s")
    await store.close()
    path.chmod(0o444)
    before = _fingerprint(path)
    ro = SQLiteStore(path, read_only=True)
    assert [s.session_id for s in await ro.list_sessions()] == ["s"]
    record = await ro.load("s")
    assert record is not None
    assert record.version == 1
    assert (await ro.audit.verify()).ok
    assert await ro.approvals.pending() == []
    with pytest.raises(StoreError, match="opened read-only: nothing can be written"):
        await ro.create("t")
    with pytest.raises(StoreError, match="opened read-only"):
        await ro.audit.append("test.note", {})
    await ro.close()
    assert _fingerprint(path) == before  # same bytes, same mtime, no -wal/-shm created


async def test_read_only_refuses_a_schema_it_would_have_to_migrate(tmp_path: Path) -> None:
    from tether.durable import SchemaTooOld

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO tether_schema VALUES (1)")
        for statement in SQLITE_MIGRATIONS[0]:
            conn.execute(statement)
    conn.close()
    before = _fingerprint(path)
    ro = SQLiteStore(path, read_only=True)
    with pytest.raises(SchemaTooOld, match=f"schema version 1, older than version {STORE_SCHEMA}"):
        await ro.list_sessions()
    await ro.close()
    assert _fingerprint(path) == before
    newer = tmp_path / "new.db"
    with sqlite3.connect(newer) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO tether_schema VALUES (?)", (STORE_SCHEMA + 1,))
    conn.close()
    with pytest.raises(SchemaTooNew):
        await SQLiteStore(newer, read_only=True).list_sessions()


async def test_read_only_reads_a_live_store_through_its_wal(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    writer = SQLiteStore(path)
    await writer.create("s")  # the writer stays open: -wal and -shm exist
    assert (tmp_path / "t.db-wal").exists()
    ro = SQLiteStore(path, read_only=True)
    assert [s.session_id for s in await ro.list_sessions()] == ["s"]
    await writer.create("t")
    assert {s.session_id for s in await ro.list_sessions()} == {"s", "t"}
    await ro.close()
    await writer.close()


async def test_create_of_a_new_session_reads_nothing_back(tmp_path: Path) -> None:
    # the record of the row just inserted is built, not loaded: one statement less per
    # child session (a workflow node, a sub-agent); what it returns is what load returns
    store = SQLiteStore(tmp_path / "t.db")
    await store.create("warm")
    conn = store._conn
    assert conn is not None
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    record = await store.create("s", metadata={"b": [1, 2], "a": "x"})
    conn.set_trace_callback(None)
    assert not [s for s in statements if s.lstrip().upper().startswith("SELECT")], statements
    assert record == await store.load("s")
    again = await store.create("s", metadata={"other": 1})  # exists: loaded, unchanged
    assert again == record
    await store.close()


async def test_loading_a_session_without_entries_reads_only_its_row(tmp_path: Path) -> None:
    # a child session is loaded right after it is created (its agent opening it): at
    # version 0 it has no entry, so only its row is read
    store = SQLiteStore(tmp_path / "t.db")
    await store.create("s")
    conn = store._conn
    assert conn is not None
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    record = await store.load("s")
    conn.set_trace_callback(None)
    assert [s for s in statements if "FROM entries" in s] == []
    assert record is not None
    assert (record.version, record.entries, record.snapshot) == (0, [], None)
    await store.append("s", 0, [("tool_intent", {"id": "c1"})])
    loaded = await store.load("s")
    assert loaded is not None
    assert [e.data for e in loaded.entries] == [{"id": "c1"}]
    await store.close()
