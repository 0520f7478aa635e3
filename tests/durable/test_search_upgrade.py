"""Schema migration 5 (session search) on a store with data: the entries already there
are indexed by the migration with the same text the append path indexes, and an
unreadable entry is skipped instead of failing the upgrade."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tether.durable import PostgresStore, SQLiteStore, Store
from tether.durable.entries import encode_json
from tether.durable.schema import POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS
from tether.durable.session_search import BODY_MAX, TextQuery, entry_text, parse_terms
from tether.durable.store import STORE_SCHEMA


def _search_migration(migrations: tuple[tuple[str, ...], ...]) -> int:
    """The index of the migration creating the index (the lead may renumber at merge)."""
    return next(i for i, m in enumerate(migrations) if any("search_text" in s for s in m))


def _text(*texts: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t} for t in texts]


ROWS: list[tuple[str, int, str, str]] = [  # session, seq, kind, data
    (
        "old-1",
        1,
        "message",
        encode_json({"message": {"role": "user", "content": _text("kiwi", "fig")}}, what="t"),
    ),
    (
        "old-1",
        2,
        "message",
        encode_json(
            {
                "message": {
                    "role": "assistant",
                    "content": [
                        *_text("kiwi and mango"),
                        {"type": "tool_call", "id": "c", "name": "t", "arguments": {"q": "papaya"}},
                    ],
                }
            },
            what="t",
        ),
    ),
    (
        "old-1",
        3,
        "message",
        encode_json(
            {
                "message": {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_call_id": "c",
                            "name": "t",
                            "content": "guava result",
                            "is_error": False,
                            "status": "ok",
                        }
                    ],
                }
            },
            what="t",
        ),
    ),
    (
        "old-1",
        4,
        "message",
        encode_json({"message": {"role": "system", "content": _text("kiwi system")}}, what="t"),
    ),
    ("old-2", 1, "message", '{"message": not json kiwi'),
    (
        "old-2",
        2,
        "message",
        encode_json(
            {
                "message": {
                    "role": "user",
                    "content": ["kiwi", 3, *_text("plum"), {"type": "text", "text": 7}],
                }
            },
            what="t",
        ),
    ),
    ("old-2", 3, "state", encode_json({"state": {"k": "kiwi"}}, what="t")),
    (
        "old-2",
        4,
        "message",
        encode_json(
            {"message": {"role": "user", "content": _text("lime " * (BODY_MAX // 5 + 10))}},
            what="t",
        ),
    ),
    (
        "old-2",
        5,
        "message",
        encode_json({"message": {"role": "user", "content": "kiwi as a string"}}, what="t"),
    ),
]


def _expected(session_id: str, seq: int) -> str:
    import json

    row = next(r for r in ROWS if r[0] == session_id and r[1] == seq)
    found = entry_text(row[2], json.loads(row[3]))
    assert found is not None
    return found[1]


async def _check(store: Store) -> None:
    async def hits(words: str) -> list[tuple[str, int, str, str]]:
        found = await store.search_text(TextQuery(parse_terms(words)))  # type: ignore[attr-defined]
        return sorted((h.session_id, h.seq, h.role, h.text) for h in found)

    assert await hits("kiwi") == [
        ("old-1", 1, "user", _expected("old-1", 1)),
        ("old-1", 2, "assistant", _expected("old-1", 2)),
    ]
    assert await hits("guava") == [("old-1", 3, "tool", "guava result")]
    assert await hits("papaya") == []  # tool-call arguments are not indexed
    assert await hits("plum") == [("old-2", 2, "user", "plum")]
    [(_, _, _, lime)] = await hits("lime")
    assert lime == _expected("old-2", 4)
    assert len(lime) == BODY_MAX
    # the index keeps following appends after the upgrade
    record = await store.load("old-1")
    assert record is not None
    await store.append(
        "old-1",
        record.version,
        [("message", {"message": {"role": "user", "content": _text("kiwi again")}})],
    )
    assert [h[1] for h in await hits("kiwi")] == [1, 2, 5]


async def test_sqlite_upgrade_indexes_the_sessions_already_stored(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    before = _search_migration(SQLITE_MIGRATIONS)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        for version in range(before):
            for statement in SQLITE_MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO tether_schema VALUES (?)", (version + 1,))
        for sid in ("old-1", "old-2"):
            conn.execute(
                "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
                "VALUES (?, ?, 'completed', 1.0, 2.0, '{}')",
                (sid, max(r[1] for r in ROWS if r[0] == sid)),
            )
        conn.executemany(
            "INSERT INTO entries (session_id, seq, kind, schema, at, data) VALUES (?, ?, ?, 1, 5.0, ?)",
            ROWS,
        )
    store = SQLiteStore(path)
    try:
        await _check(store)
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] == STORE_SCHEMA
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == len(ROWS) + 1


async def test_postgres_upgrade_indexes_the_sessions_already_stored(pg_dsn: str) -> None:
    psycopg: Any = pytest.importorskip("psycopg")
    before = _search_migration(POSTGRES_MIGRATIONS)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
        for version in range(before):
            for statement in POSTGRES_MIGRATIONS[version]:
                conn.execute(statement)
            conn.execute("INSERT INTO tether_schema VALUES (%s)", (version + 1,))
        for sid in ("old-1", "old-2"):
            conn.execute(
                "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
                "VALUES (%s, %s, 'completed', 1.0, 2.0, '{}')",
                (sid, max(r[1] for r in ROWS if r[0] == sid)),
            )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO entries (session_id, seq, kind, schema, at, data) "
                "VALUES (%s, %s, %s, 1, 5.0, %s)",
                ROWS,
            )
    store = PostgresStore(pg_dsn)
    try:
        await _check(store)
    finally:
        await store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] == STORE_SCHEMA
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == len(ROWS) + 1
