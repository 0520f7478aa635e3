"""SQLiteStore: the embedded default (stdlib sqlite3, WAL).

The Store API: sessions, leases and the journal here; approvals, audit and approvers
(:mod:`.ops`), worker claims (:mod:`.claims`) and the sessions list (:mod:`.listing`)
are collaborators the store owns, each running its queries in the store's
``transaction``. Calls that can wait run on the store's writer and reader threads
(:mod:`.threads`), where concurrent writes share group commits; the connections and
transactions are :mod:`.connections`. Writes go through one connection, reads through
another, so in WAL mode a read never waits behind a write that waits for another
process's lock.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tether.durable.claims import WorkerSide
from tether.durable.entries import ENTRY_SCHEMA, Entry, JournalKind, decode_entry, decode_object
from tether.durable.errors import (
    LeaseLost,
    SessionBusy,
    SessionConflict,
    SessionNotFound,
)
from tether.durable.schema import ENTRY_COLS, SESSION_COLS
from tether.durable.session_search import TextHit, TextQuery, index_rows
from tether.durable.sqlite.claims import SQLiteClaims
from tether.durable.sqlite.connections import SQLiteConnections
from tether.durable.sqlite.listing import SQLiteListing
from tether.durable.sqlite.memory_entries import SQLiteMemoryEntries
from tether.durable.sqlite.ops import (
    SQLiteApprovals,
    SQLiteApprovers,
    SQLiteAudit,
    ready_if_held_decided,
    write_sidecar,
)
from tether.durable.sqlite.search import SQLiteSearch, delete_index, write_index
from tether.durable.sqlite.threads import offloaded
from tether.durable.store import (
    EncodedEntry,
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
    import sqlite3


class SQLiteStore(SQLiteConnections, WorkerSide):
    """Session store in one SQLite file (WAL mode), safe across processes.

    Non-durable appends commit with ``synchronous=NORMAL`` (survive a process crash);
    ``durable=True`` commits with ``synchronous=FULL`` (survive power loss). Write
    transactions use ``BEGIN IMMEDIATE`` so concurrent processes serialize; a write that
    waits longer than ``busy_timeout`` for another's lock raises :class:`StoreBusy`.
    Calls run on the store's writer and reader threads, never on the event loop; the
    writes queued at one time share one group commit (:mod:`tether.durable.sqlite.threads`).

    ``read_only=True`` writes nothing, ever: no pragma, no migration (a schema older than
    this tether reads is refused with :class:`SchemaTooOld`), every write refused. A
    forensic copy or a read-only mount can be read and verified as it is.
    """

    blocks_loop: ClassVar[bool] = False
    """Its calls run on the store's threads: awaiting one never blocks the event loop."""

    def __init__(
        self,
        path: str | os.PathLike[str] = "tether.db",
        *,
        busy_timeout: float = 5.0,
        read_only: bool = False,
    ):
        super().__init__(os.fspath(path), busy_timeout, read_only)
        self._holder = Holder()
        self.approvals = SQLiteApprovals(self, self)
        self.audit = SQLiteAudit(self)
        self.approvers = SQLiteApprovers(self)
        self.memory_entries = SQLiteMemoryEntries(self)
        self._claims = SQLiteClaims(self, self._holder)
        self._listing = SQLiteListing(self)
        self._search = SQLiteSearch(self)

    # -- Store API --------------------------------------------------------------

    @offloaded("write")
    async def create(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionRecord:
        validate_session_id(session_id)
        text = encode_metadata(session_id, metadata)
        now = time.time()
        with self.transaction() as conn:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO sessions (id, version, status, created_at, updated_at, "
                "metadata) VALUES (?, 0, 'idle', ?, ?, ?)",
                (session_id, now, now, text),
            ).rowcount
        if inserted == 1:  # the row just written, as a load would read it back
            return record_from_row(session_id, (0, "idle", now, now, text, 0, *[None] * 5), [])
        record = await self.load(session_id)
        assert record is not None
        return record

    @offloaded("read")
    async def load(
        self, session_id: str, *, known_version: int | None = None
    ) -> SessionRecord | None:
        with self.transaction("BEGIN") as conn:
            row = conn.execute(
                f"SELECT {SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            snap = row[5]
            raw = []
            if row[0] != known_version and row[0] > 0:  # version 0: no entry written yet
                raw = conn.execute(
                    f"SELECT {ENTRY_COLS} FROM entries WHERE session_id = ? AND (seq >= ? OR "
                    "kind = 'snapshot') ORDER BY seq",
                    (session_id, max(snap, 1)),
                ).fetchall()
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
        # validated and encoded by the caller: the writer thread, which every session of
        # the store shares, runs only the SQL
        encoded = encode_entries(session_id, expected_version, entries, status)
        indexed = index_rows(expected_version, entries)
        now = await self._write_entries(
            session_id, expected_version, encoded, status, lease, sidecar, indexed, durable=durable
        )
        return [decode_entry(session_id, e.seq, e.kind, e.text, now, ENTRY_SCHEMA) for e in encoded]

    @offloaded("write", durable_kw="durable")
    async def _write_entries(
        self,
        session_id: str,
        expected_version: int,
        encoded: list[EncodedEntry],
        status: SessionStatus | None,
        lease: Lease | None,
        sidecar: Sidecar | None,
        indexed: list[tuple[int, str, str]],
        *,
        durable: bool,
    ) -> float:
        now = time.time()
        version = expected_version + len(encoded)
        snap = max((e.seq for e in encoded if e.kind == "snapshot"), default=0)
        sql = (
            "UPDATE sessions SET version = ?, updated_at = ?, status = coalesce(?, status), "
            "snapshot_seq = max(snapshot_seq, ?) WHERE id = ? AND version = ?"
        )
        args: tuple[Any, ...] = (version, now, status, snap, session_id, expected_version)
        if lease is not None:
            sql += " AND lease_token = ? AND lease_expires > ?"
            args += (lease.token, now)
        with self.transaction(durable=durable) as conn:
            if conn.execute(sql, args).rowcount != 1:
                self._diagnose(conn, session_id, expected_version, lease, now)
            conn.executemany(
                "INSERT INTO entries (session_id, seq, kind, schema, at, data) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, e.seq, e.kind, ENTRY_SCHEMA, now, e.text) for e in encoded],
            )
            if sidecar:
                write_sidecar(conn, sidecar)
                if status == "suspended":
                    ready_if_held_decided(conn, session_id, sidecar.held, now)
            if indexed:
                write_index(conn, session_id, now, indexed)
        return now

    def _diagnose(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        expected: int,
        lease: Lease | None,
        now: float,
    ) -> None:
        row = conn.execute(
            "SELECT version, lease_token, lease_expires FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise SessionNotFound(session_id)
        if row[0] != expected:
            raise SessionConflict(session_id, expected, row[0])
        if lease is not None and row[1] != lease.token:
            raise LeaseLost(session_id, "another holder took it or it was released")
        raise LeaseLost(session_id, "it expired")

    @offloaded("read")
    async def read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> list[Entry]:
        with self.transaction("BEGIN") as conn:
            if (
                conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
                is None
            ):
                raise SessionNotFound(session_id)
            raw = conn.execute(
                f"SELECT {ENTRY_COLS} FROM entries WHERE session_id = ? AND seq > ? AND seq <= ? "
                "ORDER BY seq",
                (session_id, after_seq, until_seq if until_seq is not None else 2**62),
            ).fetchall()
        return [decode_entry(session_id, r[0], r[1], r[2], r[3], r[4]) for r in raw]

    @offloaded("write")
    async def acquire_lease(
        self, session_id: str, *, ttl: float = 30.0, create: bool = False
    ) -> Lease:
        check_ttl(ttl)
        if create:
            validate_session_id(session_id)
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT lease_token, lease_holder, lease_host, lease_pid, lease_expires "
                "FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            now = time.time()
            if row is None and create:
                conn.execute(
                    "INSERT INTO sessions (id, version, status, created_at, updated_at, "
                    "metadata) VALUES (?, 0, 'idle', ?, ?, '{}')",
                    (session_id, now, now),
                )
                row = (None, None, None, None, None)
            if row is None:
                raise SessionNotFound(session_id)
            token, holder, host, pid, expires = row
            if not can_take(self._holder, session_id, token, host, pid, expires, now):
                raise SessionBusy(session_id, holder, expires)
            lease = self._holder.lease(
                session_id, next_token(self._holder, session_id, token), now + ttl
            )
            conn.execute(
                "UPDATE sessions SET lease_token = ?, lease_holder = ?, lease_host = ?, "
                "lease_pid = ?, lease_expires = ? WHERE id = ?",
                (lease.token, lease.holder, lease.host, lease.pid, lease.expires_at, session_id),
            )
        self._holder.held[session_id] = lease.token
        return lease

    @offloaded("write")
    async def renew_lease(self, lease: Lease, *, ttl: float = 30.0) -> Lease:
        check_ttl(ttl)
        renewed = self._holder.lease(lease.session_id, lease.token, time.time() + ttl)
        with self.transaction() as conn:
            cur = conn.execute(
                "UPDATE sessions SET lease_expires = ? WHERE id = ? AND lease_token = ?",
                (renewed.expires_at, lease.session_id, lease.token),
            )
            if cur.rowcount != 1:
                raise LeaseLost(lease.session_id, "another holder took it or it was released")
        return renewed

    @offloaded("write")
    async def release_lease(self, lease: Lease) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE sessions SET lease_token = NULL, lease_holder = NULL, lease_host = NULL, "
                "lease_pid = NULL, lease_expires = NULL WHERE id = ? AND lease_token = ?",
                (lease.session_id, lease.token),
            )
        if self._holder.held.get(lease.session_id) == lease.token:
            del self._holder.held[lease.session_id]

    @offloaded("write")
    async def set_status(self, session_id: str, status: SessionStatus) -> None:
        check_status(status)
        with self.transaction() as conn:
            cur = conn.execute(
                "UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?",
                (status, time.time(), session_id),
            )
            if cur.rowcount != 1:
                raise SessionNotFound(session_id)

    @offloaded("read")
    async def list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]:
        check_status(status)
        where = "" if status is None else "WHERE status = ? "
        args: tuple[Any, ...] = () if status is None else (status,)
        with self.transaction("BEGIN") as conn:
            rows = conn.execute(
                "SELECT id, status, version, created_at, updated_at, metadata FROM sessions "
                f"{where}ORDER BY updated_at DESC, id LIMIT ?",
                (*args, max(limit, 0)),
            ).fetchall()
        return [
            SessionSummary(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                decode_object(r[5], what=f"metadata of session {r[0]!r}"),
            )
            for r in rows
        ]

    @offloaded("read")
    async def session_page(
        self,
        *,
        status: SessionStatus | None = None,
        search: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> SessionPage:
        """One page of sessions with their counts (see :mod:`tether.durable.session_list`)."""
        return self._listing.page(status, search, offset, limit)

    @offloaded("read")
    async def search_text(self, query: TextQuery) -> list[TextHit]:
        """Full-text search of past sessions (see :mod:`tether.durable.session_search`)."""
        return self._search.run(query)

    @offloaded("write")
    async def delete(self, session_id: str) -> None:
        with self.transaction() as conn:
            delete_index(conn, session_id)
            conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        self._holder.held.pop(session_id, None)

    # -- workers (tether.durable.claims) ---------------------------------------------------

    @offloaded("write")
    async def claim_ready(
        self, *, limit: int, ttl: float = 30.0, exclude: Collection[str] = ()
    ) -> list[Lease]:
        """Take the lease of up to ``limit`` sessions ready to resume (or crashed)."""
        return self._claims.claim(limit, ttl, exclude)

    @offloaded("write")
    async def mark_ready(self, session_id: str) -> bool:
        """Set a ``suspended`` session ``ready`` (a worker handing a paused run back)."""
        return self._claims.mark_ready(session_id)
