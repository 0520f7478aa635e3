"""Memory entries of :class:`~tether.durable.PostgresStore` (``store.memory_entries``).

A write takes a transaction-scoped advisory lock on its scope, then checks the caps and
writes, so workers on many hosts cannot pass a scope's caps together.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from tether.durable.postgres.pool import PgConnector

_LOCK = "SELECT pg_advisory_xact_lock(hashtext('tether.memory:' || %s))"
_USAGE = "SELECT count(*), coalesce(sum(char_length(text)), 0) FROM memory_entries WHERE scope = %s"
_GET = f"SELECT {ENTRY_COLS} FROM memory_entries WHERE scope = %s AND id = %s"


class PostgresMemoryEntries:
    def __init__(self, pg: PgConnector) -> None:
        self._pg = pg

    async def entries(self, scope: str, *, limit: int = LIST_MAX) -> list[MemoryEntry]:
        check_scope(scope)
        async with self._pg.connection("listing memory entries") as conn:
            cur = await conn.execute(
                f"SELECT {ENTRY_COLS} FROM memory_entries WHERE scope = %s "
                "ORDER BY created_at, id LIMIT %s",
                (scope, min(limit, LIST_MAX)),
            )
            rows = await cur.fetchall()
        return [entry_from_row(tuple(r)) for r in rows]

    async def get(self, scope: str, entry_id: str) -> MemoryEntry | None:
        async with self._pg.connection("reading a memory entry") as conn:
            return await _get(conn, scope, entry_id)

    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        async with self._pg.connection("adding a memory entry") as conn, conn.transaction():
            await conn.execute(_LOCK, (scope,))
            usage = await _usage(conn, scope)
            if not fits(usage, caps, entries=1, chars=len(text)):
                return Written(None, usage)
            now = time.time()
            entry_id = new_entry_id()
            while await _get(conn, scope, entry_id) is not None:
                entry_id = new_entry_id()
            await conn.execute(
                f"INSERT INTO memory_entries ({ENTRY_COLS}) VALUES (%s, %s, %s, %s, %s)",
                (scope, entry_id, text, now, now),
            )
        entry = MemoryEntry(scope, entry_id, text, now, now)
        return Written(entry, Usage(usage.entries + 1, usage.chars + len(text)))

    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        async with self._pg.connection("replacing a memory entry") as conn, conn.transaction():
            await conn.execute(_LOCK, (scope,))
            usage = await _usage(conn, scope)
            old = await _get(conn, scope, entry_id)
            if old is None:
                return Written(None, usage, missing=True)
            grown = len(text) - len(old.text)
            if not fits(usage, caps, entries=0, chars=grown):
                return Written(None, usage)
            now = time.time()
            await conn.execute(
                "UPDATE memory_entries SET text = %s, updated_at = %s WHERE scope = %s AND id = %s",
                (text, now, scope, entry_id),
            )
        entry = MemoryEntry(scope, entry_id, text, old.created_at, now)
        return Written(entry, Usage(usage.entries, usage.chars + grown))

    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        async with self._pg.connection("removing a memory entry") as conn:
            cur = await conn.execute(
                f"DELETE FROM memory_entries WHERE scope = %s AND id = %s RETURNING {ENTRY_COLS}",
                (scope, entry_id),
            )
            row = await cur.fetchone()
        return None if row is None else entry_from_row(tuple(row))

    async def scopes(self, *, limit: int = LIST_MAX) -> list[tuple[str, Usage]]:
        async with self._pg.connection("listing memory scopes") as conn:
            cur = await conn.execute(
                "SELECT scope, count(*), sum(char_length(text)) FROM memory_entries "
                "GROUP BY scope ORDER BY scope LIMIT %s",
                (min(limit, LIST_MAX),),
            )
            rows = await cur.fetchall()
        return [(r[0], Usage(int(r[1]), int(r[2] or 0))) for r in rows]


async def _usage(conn: Any, scope: str) -> Usage:
    cur = await conn.execute(_USAGE, (scope,))
    count, chars = await cur.fetchone()
    return Usage(int(count), int(chars))


async def _get(conn: Any, scope: str, entry_id: str) -> MemoryEntry | None:
    cur = await conn.execute(_GET, (scope, entry_id))
    row = await cur.fetchone()
    return None if row is None else entry_from_row(tuple(row))
