"""Memory entries of :class:`~tether.durable.SQLiteStore` (``store.memory_entries``).

A write checks the scope's caps and writes in one ``BEGIN IMMEDIATE`` transaction, so
processes sharing the file cannot pass the caps together.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from tether.durable.memory_entries import (
    ENTRY_COLS,
    LIST_MAX,
    MemoryCaps,
    MemoryEntry,
    Usage,
    Written,
    check_scope,
    check_text,
    entry_from_row,
    fits,
    new_entry_id,
)
from tether.durable.sqlite.ops import OnStoreThreads
from tether.durable.sqlite.threads import offloaded

if TYPE_CHECKING:
    import sqlite3

    from tether.durable.sqlite.connections import SQLiteConnections

_USAGE = "SELECT count(*), coalesce(sum(length(text)), 0) FROM memory_entries WHERE scope = ?"


class SQLiteMemoryEntries(OnStoreThreads):
    def __init__(self, store: SQLiteConnections) -> None:
        self._sql = store

    @offloaded("read")
    async def entries(self, scope: str, *, limit: int = LIST_MAX) -> list[MemoryEntry]:
        check_scope(scope)
        with self._sql.transaction("BEGIN") as conn:
            rows = conn.execute(
                f"SELECT {ENTRY_COLS} FROM memory_entries WHERE scope = ? "
                "ORDER BY created_at, id LIMIT ?",
                (scope, min(limit, LIST_MAX)),
            ).fetchall()
        return [entry_from_row(r) for r in rows]

    @offloaded("read")
    async def get(self, scope: str, entry_id: str) -> MemoryEntry | None:
        with self._sql.transaction("BEGIN") as conn:
            return _get(conn, scope, entry_id)

    @offloaded("write")
    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        with self._sql.transaction() as conn:
            usage = _usage(conn, scope)
            if not fits(usage, caps, entries=1, chars=len(text)):
                return Written(None, usage)
            now = time.time()
            entry_id = new_entry_id()
            while _get(conn, scope, entry_id) is not None:
                entry_id = new_entry_id()
            conn.execute(
                f"INSERT INTO memory_entries ({ENTRY_COLS}) VALUES (?, ?, ?, ?, ?)",
                (scope, entry_id, text, now, now),
            )
        entry = MemoryEntry(scope, entry_id, text, now, now)
        return Written(entry, Usage(usage.entries + 1, usage.chars + len(text)))

    @offloaded("write")
    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        with self._sql.transaction() as conn:
            usage = _usage(conn, scope)
            old = _get(conn, scope, entry_id)
            if old is None:
                return Written(None, usage, missing=True)
            grown = len(text) - len(old.text)
            if not fits(usage, caps, entries=0, chars=grown):
                return Written(None, usage)
            now = time.time()
            conn.execute(
                "UPDATE memory_entries SET text = ?, updated_at = ? WHERE scope = ? AND id = ?",
                (text, now, scope, entry_id),
            )
        entry = MemoryEntry(scope, entry_id, text, old.created_at, now)
        return Written(entry, Usage(usage.entries, usage.chars + grown))

    @offloaded("write")
    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        with self._sql.transaction() as conn:
            old = _get(conn, scope, entry_id)
            if old is not None:
                conn.execute(
                    "DELETE FROM memory_entries WHERE scope = ? AND id = ?", (scope, entry_id)
                )
        return old

    @offloaded("read")
    async def scopes(self, *, limit: int = LIST_MAX) -> list[tuple[str, Usage]]:
        with self._sql.transaction("BEGIN") as conn:
            rows = conn.execute(
                "SELECT scope, count(*), sum(length(text)) FROM memory_entries "
                "GROUP BY scope ORDER BY scope LIMIT ?",
                (min(limit, LIST_MAX),),
            ).fetchall()
        return [(r[0], Usage(int(r[1]), int(r[2] or 0))) for r in rows]


def _usage(conn: sqlite3.Connection, scope: str) -> Usage:
    count, chars = conn.execute(_USAGE, (scope,)).fetchone()
    return Usage(int(count), int(chars))


def _get(conn: sqlite3.Connection, scope: str, entry_id: str) -> MemoryEntry | None:
    row = conn.execute(
        f"SELECT {ENTRY_COLS} FROM memory_entries WHERE scope = ? AND id = ?", (scope, entry_id)
    ).fetchone()
    return None if row is None else entry_from_row(tuple(row))
