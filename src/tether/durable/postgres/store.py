"""PostgresStore: psycopg 3 async with a connection pool (extra ``postgres``).

Sessions, leases and the journal here; the pool (:mod:`.pool`), approvals, audit and
approvers (:mod:`.ops`), worker claims (:mod:`.claims`) and the sessions list
(:mod:`.listing`) are collaborators the store owns, built with the pool's public
``connection``. Lease expiry is judged by the database server's clock, so workers on
several hosts agree on it. psycopg is imported only when the store is first used.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from tether.durable.claims import WorkerSide
from tether.durable.entries import ENTRY_SCHEMA, Entry, JournalKind, decode_entry, decode_object
from tether.durable.errors import (
    LeaseLost,
    SessionBusy,
    SessionConflict,
    SessionNotFound,
    StoreError,
)
from tether.durable.postgres.claims import PgClaims
from tether.durable.postgres.listing import PgListing
from tether.durable.postgres.memory_entries import PostgresMemoryEntries
from tether.durable.postgres.ops import (
    PostgresApprovals,
    PostgresApprovers,
    PostgresAudit,
    ready_if_held_decided,
    write_sidecar,
)
from tether.durable.postgres.pool import Broken, PgConnector
from tether.durable.postgres.search import INDEX_CTE, PgSearch, index_params
from tether.durable.schema import ENTRY_COLS, SESSION_COLS
from tether.durable.session_search import TextHit, TextQuery, index_rows
from tether.durable.store import (
    Holder,
    Lease,
    SessionPage,
    SessionRecord,
    SessionStatus,
    SessionSummary,
    Sidecar,
    can_take,
    check_status,
    check_ttl,
    encode_entries,
    encode_metadata,
    next_token,
    record_from_row,
)
from tether.session_ids import validate_session_id

if TYPE_CHECKING:
    from tether.durable.postgres.pool import Conn

_NOW = "extract(epoch FROM clock_timestamp())::double precision"

# One statement, one round trip: CAS on the session row, then insert the entries.
_APPEND = f"""
WITH s AS (
    UPDATE sessions SET version = %(version)s, updated_at = %(at)s,
        status = coalesce(%(status)s, status),
        snapshot_seq = greatest(snapshot_seq, %(snap)s)
    WHERE id = %(id)s AND version = %(expected)s
      AND (%(token)s::text IS NULL OR (lease_token = %(token)s AND lease_expires > {_NOW}))
    RETURNING id
), i AS (
    INSERT INTO entries (session_id, seq, kind, schema, at, data)
    SELECT s.id, e.seq, e.kind, %(schema)s, %(at)s, e.data
    FROM s, unnest(%(seqs)s::bigint[], %(kinds)s::text[], %(datas)s::text[]) AS e(seq, kind, data)
){INDEX_CTE}
SELECT count(*) FROM s
"""


class PostgresStore(WorkerSide):
    """Session store in PostgreSQL; many workers on many hosts can share one database.

    Non-durable appends commit with ``synchronous_commit=off``; ``durable=True`` turns it
    on for that transaction (the commit is flushed to disk before returning).
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        connect_timeout: float = 5.0,
    ) -> None:
        self.dsn = dsn
        self._pg = PgConnector(
            dsn, min_size=min_size, max_size=max_size, connect_timeout=connect_timeout
        )
        self._conn = self._pg.connection
        self._holder = Holder()
        self.approvals = PostgresApprovals(self, self._pg)
        self.audit = PostgresAudit(self._pg)
        self.approvers = PostgresApprovers(self._pg)
        self.memory_entries = PostgresMemoryEntries(self._pg)
        self._claims = PgClaims(self._pg, self._holder)
        self._listing = PgListing(self._pg)
        self._search = PgSearch(self._pg)

    async def create(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionRecord:
        validate_session_id(session_id)
        text = encode_metadata(session_id, metadata)
        now = time.time()
        async with self._conn(f"creating session {session_id!r}") as conn:
            await conn.execute(
                "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
                "VALUES (%s, 0, 'idle', %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (session_id, now, now, text),
            )
        record = await self.load(session_id)
        if record is None:
            raise StoreError(f"session {session_id!r} was deleted while being created")
        return record

    async def load(
        self, session_id: str, *, known_version: int | None = None
    ) -> SessionRecord | None:
        try:
            return await self._load(session_id, known_version)
        except Broken:  # a stale pooled connection: retry once on a fresh one
            return await self._load(session_id, known_version)

    async def _load(self, session_id: str, known_version: int | None) -> SessionRecord | None:
        async with (
            self._conn(f"loading session {session_id!r}") as conn,
            conn.transaction(),
        ):
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur = await conn.execute(
                f"SELECT {SESSION_COLS} FROM sessions WHERE id = %s", (session_id,)
            )
            row = await cur.fetchone()
            if row is None:
                return None
            snap = int(row[5])
            raw = []
            if int(row[0]) != known_version:
                cur = await conn.execute(
                    f"SELECT {ENTRY_COLS} FROM entries WHERE session_id = %s AND (seq >= %s OR "
                    "kind = 'snapshot') ORDER BY seq",
                    (session_id, max(snap, 1)),
                )
                raw = await cur.fetchall()
        entries = [decode_entry(session_id, r[0], r[1], r[2], r[3], r[4]) for r in raw]
        return record_from_row(session_id, row, entries)

    async def append(
        self,
        session_id: str,
        expected_version: int,
        entries: Sequence[tuple[JournalKind, dict[str, Any]]],
        *,
        status: SessionStatus | None = None,
        durable: bool = False,
        lease: Lease | None = None,
        sidecar: Sidecar | None = None,
    ) -> list[Entry]:
        encoded = encode_entries(session_id, expected_version, entries, status)
        now = time.time()
        params = {
            "version": expected_version + len(encoded),
            "at": now,
            "status": status,
            "snap": max((e.seq for e in encoded if e.kind == "snapshot"), default=0),
            "id": session_id,
            "expected": expected_version,
            "token": None if lease is None else lease.token,
            "schema": ENTRY_SCHEMA,
            "seqs": [e.seq for e in encoded],
            "kinds": [e.kind for e in encoded],
            "datas": [e.text for e in encoded],
            **index_params(index_rows(expected_version, entries)),
        }
        doing = f"appending to session {session_id!r} (outcome unknown: reload to check)"
        async with self._conn(doing) as conn:
            if durable or sidecar:
                async with conn.transaction():
                    if durable:
                        await conn.execute("SET LOCAL synchronous_commit TO on")
                    cur = await conn.execute(_APPEND, params)
                    row = await cur.fetchone()
                    if not row or row[0] != 1:
                        await self._explain(conn, session_id, expected_version, lease)
                    if sidecar:
                        await write_sidecar(conn, sidecar)
                        if status == "suspended":
                            await ready_if_held_decided(conn, session_id, sidecar.held)
            else:
                cur = await conn.execute(_APPEND, params)
                row = await cur.fetchone()
            if not row or row[0] != 1:
                await self._explain(conn, session_id, expected_version, lease)
        return [decode_entry(session_id, e.seq, e.kind, e.text, now, ENTRY_SCHEMA) for e in encoded]

    async def _explain(
        self,
        conn: Conn,
        session_id: str,
        expected: int,
        lease: Lease | None,
    ) -> None:
        """Raise the reason the compare-and-set matched no row."""
        cur = await conn.execute(
            "SELECT version, lease_token FROM sessions WHERE id = %s", (session_id,)
        )
        row = await cur.fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        if int(row[0]) != expected:
            raise SessionConflict(session_id, expected, int(row[0]))
        if lease is not None and row[1] != lease.token:
            raise LeaseLost(session_id, "another holder took it or it was released")
        raise LeaseLost(session_id, "it expired")

    async def read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> list[Entry]:
        try:
            return await self._read_entries(session_id, after_seq, until_seq=until_seq)
        except Broken:
            return await self._read_entries(session_id, after_seq, until_seq=until_seq)

    async def _read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> list[Entry]:
        async with (
            self._conn(f"reading session {session_id!r}") as conn,
            conn.transaction(),
        ):
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur = await conn.execute("SELECT 1 FROM sessions WHERE id = %s", (session_id,))
            if await cur.fetchone() is None:
                raise SessionNotFound(session_id)
            cur = await conn.execute(
                f"SELECT {ENTRY_COLS} FROM entries WHERE session_id = %s AND seq > %s "
                "AND seq <= %s ORDER BY seq",
                (session_id, after_seq, until_seq if until_seq is not None else 2**62),
            )
            raw = await cur.fetchall()
        return [decode_entry(session_id, r[0], r[1], r[2], r[3], r[4]) for r in raw]

    async def acquire_lease(
        self, session_id: str, *, ttl: float = 30.0, create: bool = False
    ) -> Lease:
        check_ttl(ttl)
        if create:
            validate_session_id(session_id)
        async with (
            self._conn(f"acquiring the lease of session {session_id!r}") as conn,
            conn.transaction(),
        ):
            if create:
                made = time.time()
                await conn.execute(
                    "INSERT INTO sessions (id, version, status, created_at, updated_at, metadata) "
                    "VALUES (%s, 0, 'idle', %s, %s, '{}') ON CONFLICT (id) DO NOTHING",
                    (session_id, made, made),
                )
            cur = await conn.execute(
                "SELECT lease_token, lease_holder, lease_host, lease_pid, lease_expires, "
                f"{_NOW} FROM sessions WHERE id = %s FOR UPDATE",
                (session_id,),
            )
            row = await cur.fetchone()
            if row is None:
                raise SessionNotFound(session_id)
            token, holder, host, pid, expires, now = row
            if not can_take(self._holder, session_id, token, host, pid, expires, now):
                raise SessionBusy(session_id, holder, expires)
            token = next_token(self._holder, session_id, token)
            lease = self._holder.lease(session_id, token, now + ttl)
            await conn.execute(
                "UPDATE sessions SET lease_token = %s, lease_holder = %s, lease_host = %s, "
                "lease_pid = %s, lease_expires = %s WHERE id = %s",
                (lease.token, lease.holder, lease.host, lease.pid, lease.expires_at, session_id),
            )
        self._holder.held[session_id] = lease.token
        return lease

    async def renew_lease(self, lease: Lease, *, ttl: float = 30.0) -> Lease:
        check_ttl(ttl)
        async with self._conn(f"renewing the lease of session {lease.session_id!r}") as conn:
            cur = await conn.execute(
                f"UPDATE sessions SET lease_expires = {_NOW} + %s "
                "WHERE id = %s AND lease_token = %s RETURNING lease_expires",
                (ttl, lease.session_id, lease.token),
            )
            row = await cur.fetchone()
        if row is None:
            raise LeaseLost(lease.session_id, "another holder took it or it was released")
        return self._holder.lease(lease.session_id, lease.token, float(row[0]))

    async def release_lease(self, lease: Lease) -> None:
        async with self._conn(f"releasing the lease of session {lease.session_id!r}") as conn:
            await conn.execute(
                "UPDATE sessions SET lease_token = NULL, lease_holder = NULL, lease_host = NULL, "
                "lease_pid = NULL, lease_expires = NULL WHERE id = %s AND lease_token = %s",
                (lease.session_id, lease.token),
            )
        if self._holder.held.get(lease.session_id) == lease.token:
            del self._holder.held[lease.session_id]

    async def set_status(self, session_id: str, status: SessionStatus) -> None:
        check_status(status)
        async with self._conn(f"setting the status of session {session_id!r}") as conn:
            cur = await conn.execute(
                "UPDATE sessions SET status = %s, updated_at = %s WHERE id = %s",
                (status, time.time(), session_id),
            )
            if cur.rowcount != 1:
                raise SessionNotFound(session_id)

    async def list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]:
        try:
            return await self._list_sessions(status=status, limit=limit)
        except Broken:
            return await self._list_sessions(status=status, limit=limit)

    async def _list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]:
        check_status(status)
        async with self._conn("listing sessions") as conn:
            cur = await conn.execute(
                "SELECT id, status, version, created_at, updated_at, metadata FROM sessions "
                "WHERE %(status)s::text IS NULL OR status = %(status)s "
                "ORDER BY updated_at DESC, id LIMIT %(limit)s",
                {"status": status, "limit": max(limit, 0)},
            )
            rows = await cur.fetchall()
        return [
            SessionSummary(
                r[0], r[1], int(r[2]), r[3], r[4], decode_object(r[5], what=f"metadata of {r[0]!r}")
            )
            for r in rows
        ]

    async def session_page(
        self,
        *,
        status: SessionStatus | None = None,
        search: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> SessionPage:
        """One page of sessions with their counts (see :mod:`tether.durable.session_list`)."""
        try:
            return await self._listing.page(status, search, offset, limit)
        except Broken:  # a stale pooled connection: retry once on a fresh one
            return await self._listing.page(status, search, offset, limit)

    async def search_text(self, query: TextQuery) -> list[TextHit]:
        """Full-text search of past sessions (see :mod:`tether.durable.session_search`)."""
        try:
            return await self._search.run(query)
        except Broken:  # a stale pooled connection: retry once on a fresh one
            return await self._search.run(query)

    async def delete(self, session_id: str) -> None:
        async with self._conn(f"deleting session {session_id!r}") as conn, conn.transaction():
            await conn.execute("DELETE FROM search_text WHERE session_id = %s", (session_id,))
            await conn.execute("DELETE FROM entries WHERE session_id = %s", (session_id,))
            await conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
        self._holder.held.pop(session_id, None)

    # -- workers (tether.durable.claims) ---------------------------------------------------

    async def claim_ready(
        self, *, limit: int, ttl: float = 30.0, exclude: Collection[str] = ()
    ) -> list[Lease]:
        """Take the lease of up to ``limit`` sessions ready to resume (or crashed)."""
        return await self._claims.claim(limit, ttl, exclude)

    async def mark_ready(self, session_id: str) -> bool:
        """Set a ``suspended`` session ``ready`` (a worker handing a paused run back)."""
        return await self._claims.mark_ready(session_id)

    async def wait_ready(self, seconds: float) -> bool:
        """Wait for a session to become ready: ``LISTEN tether_ready``; False on timeout."""
        return await self._claims.wait(seconds)

    async def close(self) -> None:
        await self._claims.close()
        await self._pg.close()
