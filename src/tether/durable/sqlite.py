"""SQLiteStore: the embedded default (stdlib sqlite3, WAL).

Calls run off the event loop, on the store's writer and reader threads
(:mod:`tether.durable.sqlite_io`): concurrent writes share group commits. Writes go
through one connection, reads through another, so in WAL mode a read never waits
behind a write that waits for another process's lock.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from tether.durable.claims import WorkerSide, sqlite_claim, sqlite_mark_ready
from tether.durable.entries import ENTRY_SCHEMA, Entry, JournalKind, decode_entry, decode_object
from tether.durable.errors import (
    LeaseLost,
    SchemaTooNew,
    SchemaTooOld,
    SessionBusy,
    SessionConflict,
    SessionNotFound,
    StoreBusy,
    StoreError,
    StoreUnavailable,
)
from tether.durable.schema import SQLITE_MIGRATIONS
from tether.durable.sqlite_io import (
    Batch,
    StoreThreads,
    current_batch,
    offloaded,
    reads_on_writer,
    running_inline,
)
from tether.durable.sqlite_ops import SQLiteApprovals, SQLiteApprovers, SQLiteAudit, write_sidecar
from tether.durable.store import (
    STORE_SCHEMA,
    EncodedEntry,
    Holder,
    Lease,
    SessionRecord,
    SessionStatus,
    SessionSummary,
    Sidecar,
    can_take,
    check_status,
    check_ttl,
    encode_entries,
    encode_metadata,
    lease_from_row,
    next_token,
)
from tether.session_ids import validate_session_id

if TYPE_CHECKING:
    import sqlite3

    from tether.durable.session_list import SessionPage

_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (primary codes)
_NOT_A_DATABASE = 26  # SQLITE_NOTADB

_SESSION_COLS = (
    "version, status, created_at, updated_at, metadata, snapshot_seq, "
    "lease_token, lease_holder, lease_host, lease_pid, lease_expires"
)
_ENTRY_COLS = "seq, kind, data, at, schema"


def read_only_uri(path: str) -> str:
    """The ``file:`` URI opening ``path`` read-only without creating any file.

    ``mode=ro`` alone still creates the ``-wal``/``-shm`` files of a WAL database when the
    directory is writable (and fails on a read-only mount). When no ``-wal`` exists no
    writer has the database open and the file is complete, so it is also opened
    ``immutable`` (no locks, no side files); with a ``-wal`` (a live store) it is read
    through the existing ``-wal``/``-shm`` like any reader.
    """
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    if not any(os.path.exists(path + side) for side in ("-wal", "-journal")):
        uri += "&immutable=1"
    return uri


class SQLiteStore(WorkerSide):
    """Session store in one SQLite file (WAL mode), safe across processes.

    Non-durable appends commit with ``synchronous=NORMAL`` (survive a process crash);
    ``durable=True`` commits with ``synchronous=FULL`` (survive power loss). Write
    transactions use ``BEGIN IMMEDIATE`` so concurrent processes serialize; a write that
    waits longer than ``busy_timeout`` for another's lock raises :class:`StoreBusy`.
    Calls run on the store's writer and reader threads, never on the event loop; the
    writes queued at one time share one group commit (:mod:`tether.durable.sqlite_io`).

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
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()  # RLock: an inline call takes it, then _writing()
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.RLock()
        # an in-memory database is private to its connection: reads share the writer
        self._one_conn = self.path == ":memory:" or self.path.startswith("file::memory:")
        self._holder = Holder()
        self._io_owner = self
        self._threads: StoreThreads | None = None
        self._threads_lock = threading.Lock()
        self.approvals = SQLiteApprovals(self)
        self.audit = SQLiteAudit(self)
        self.approvers = SQLiteApprovers(self)

    # -- connection -------------------------------------------------------------

    def _open(self, *, migrate: bool = True) -> sqlite3.Connection:
        import sqlite3

        target, uri = (read_only_uri(self.path), True) if self.read_only else (self.path, False)
        try:
            conn = sqlite3.connect(
                target,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
                uri=uri,
            )
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")  # per connection
            if self.read_only:
                self._check_schema(conn)
            elif migrate:
                self._use_wal(conn)
                conn.execute("PRAGMA synchronous = NORMAL")
                # no checkpoint at COMMIT (one may run inline, on the event loop): the
                # writer thread checkpoints every CHECKPOINT_EVERY commits instead
                conn.execute("PRAGMA wal_autocheckpoint = 0")
                # no waiting inside SQLite: _begin_immediate waits, and only off the loop
                conn.execute("PRAGMA busy_timeout = 0")
                self._migrate(conn)
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._unavailable(exc) from exc
            raise
        return conn

    def _use_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL (it stays so). Switching needs an exclusive lock and
        SQLite answers "locked" at once, without its busy handler, while another
        connection (a second store object, another process) opens the same new file:
        retry until ``busy_timeout``."""
        import sqlite3

        if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
            return
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _BUSY_CODES:
                    raise
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.005)

    def _commit(self, conn: sqlite3.Connection) -> None:
        """COMMIT, or roll back and raise: nothing of the transaction was written."""
        import sqlite3

        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._failed(exc, "; commit failed, nothing was written") from exc

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE`` on the write connection, whose ``busy_timeout`` is 0: while
        another connection holds the write lock this waits here, up to ``busy_timeout``
        - except in a call run inline on the event loop, which gives up at once (and
        goes to the writer thread)."""
        import sqlite3

        deadline = 0.0
        pause = 0.001
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
                if code not in _BUSY_CODES or running_inline():
                    raise self._failed(exc) from exc
                now = time.monotonic()
                deadline = deadline or now + self.busy_timeout
                if now >= deadline:
                    raise self._failed(exc) from exc
                time.sleep(min(pause, deadline - now))
                pause = min(pause * 2, 0.025)

    def _io_threads(self) -> StoreThreads:
        with self._threads_lock:
            if self._threads is None:
                self._threads = StoreThreads(self)
            return self._threads

    @contextmanager
    def _batch(self, durable: bool) -> Iterator[Batch]:
        """One group commit (run by the writer thread): ``BEGIN IMMEDIATE`` ... ``COMMIT``,
        fsync'd (FULL) when ``durable``; each call inside it runs in ``_in_batch``."""

        if self.read_only:
            raise StoreError(
                f"SQLite store {self.path!r} was opened read-only: nothing can be written to it "
                "(open it without read_only to write)"
            )
        with self._writing() as conn:
            if durable:
                conn.execute("PRAGMA synchronous = FULL")
            try:
                self._begin_immediate(conn)
                batch = Batch(self, conn, durable)
                try:
                    yield batch
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                if batch.lost is not None:  # calls that had succeeded were rolled back too
                    raise batch.lost
                if conn.in_transaction:  # else begun again after a failed call, and failed
                    self._commit(conn)
            finally:
                if durable:
                    conn.execute("PRAGMA synchronous = NORMAL")

    @contextmanager
    def _in_batch(self, batch: Batch, durable: bool) -> Iterator[sqlite3.Connection]:
        """A call's part of a group commit, which a failure rolls back alone: a savepoint,
        or for the first call (nothing else in the transaction yet) none - its failure
        rolls the transaction back and begins it again for the calls after it."""

        if durable and not batch.durable:
            raise StoreError("internal: a durable write ran in a group commit that is not fsync'd")
        if batch.broken is not None:
            raise batch.broken
        conn = batch.conn
        if not batch.holds_work:
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                try:
                    self._begin_immediate(conn)
                except StoreError as exc:
                    batch.broken = exc
                raise
            batch.holds_work = True
            return
        name = f"call{batch.savepoints}"
        batch.savepoints += 1
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException as exc:
            if not conn.in_transaction:  # SQLite rolled it all back (I/O error, disk full)
                batch.broken = batch.lost = StoreError(
                    f"SQLite store {self.path!r}: a write failed and SQLite rolled back the "
                    f"whole group commit ({exc}); nothing of it was written"
                )
                raise
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._writer()

    def _writer(self) -> sqlite3.Connection:
        """The write connection (opened and migrated on first use); call under ``_lock``."""
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _read_conn(self) -> sqlite3.Connection:
        """The read connection; call under ``_read_lock``. The schema is made first, by the
        writer."""
        if self._reader is None:
            # the schema first (a read-only store never opens a writer); once the write
            # connection exists it is made, and its lock may be held by a write that waits
            if not self.read_only and self._conn is None:
                with self._lock:
                    self._writer()
            self._reader = self._open(migrate=False)
        return self._reader

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The read connection under its lock (the writer's, for an in-memory database)."""
        batch = current_batch(self)
        if batch is not None:  # inside a group commit: read what it wrote so far
            yield batch.conn
        elif self._one_conn or reads_on_writer(self):
            with self._lock:
                yield self._writer()
        else:
            with self._read_lock:
                yield self._read_conn()

    def _failed(self, exc: sqlite3.Error, detail: str = "") -> StoreError:
        """A StoreError for ``exc``: :class:`StoreBusy` when another connection holds a lock."""
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _BUSY_CODES:
            return StoreBusy(
                f"SQLite store {self.path!r} is locked by another connection (waited "
                f"{self.busy_timeout:g} s){detail}; nothing was written, retry in a moment"
            )
        return StoreError(f"SQLite store {self.path!r}: {exc}{detail}")

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        where = os.path.abspath(self.path)
        if getattr(exc, "sqlite_errorcode", None) == _NOT_A_DATABASE:
            return StoreUnavailable(
                f"{where!r} is not an SQLite database ({exc}); pass the path of a tether "
                "store (an SQLite file) or a postgresql:// URL."
            )
        if self.read_only:
            return StoreUnavailable(
                f"cannot open SQLite store at {where!r} read-only: {exc}. "
                "Check that the file exists, is readable and is a tether store."
            )
        return StoreUnavailable(
            f"cannot open SQLite store at {where!r}: {exc}. "
            "Check that the directory exists and is writable, or pass another path."
        )

    def _check_schema(self, conn: sqlite3.Connection) -> None:
        """Read-only: the schema must be exactly the one this tether reads (nothing migrates)."""
        table = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tether_schema'"
        ).fetchone()
        found = 0
        if table is not None:
            found = conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] or 0
        if found > STORE_SCHEMA:
            raise SchemaTooNew(f"SQLite store {self.path!r}", found, STORE_SCHEMA)
        if found < STORE_SCHEMA:
            raise SchemaTooOld(f"SQLite store {self.path!r}", found, STORE_SCHEMA)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        self._begin_immediate(conn)
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS tether_schema (version INTEGER NOT NULL)")
            found = conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] or 0
            if found > STORE_SCHEMA:
                raise SchemaTooNew(f"SQLite store {self.path!r}", found, STORE_SCHEMA)
            for version in range(found, STORE_SCHEMA):
                for statement in SQLITE_MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute("INSERT INTO tether_schema (version) VALUES (?)", (version + 1,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _tx(
        self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """One transaction; ``durable`` fsyncs its commit (FULL). ``BEGIN`` (deferred) is a
        read: it runs on the read connection, under its own lock."""
        import sqlite3

        if self.read_only and begin != "BEGIN":
            raise StoreError(
                f"SQLite store {self.path!r} was opened read-only: nothing can be written to it "
                "(open it without read_only to write)"
            )
        batch = current_batch(self)
        if batch is not None:
            with self._in_batch(batch, durable) as conn:
                yield conn
            return
        with self._reading() if begin == "BEGIN" else self._writing() as conn:
            if durable:
                conn.execute("PRAGMA synchronous = FULL")
            try:
                if begin == "BEGIN IMMEDIATE" and not self._one_conn:
                    self._begin_immediate(conn)
                else:
                    try:
                        conn.execute(begin)
                    except sqlite3.Error as exc:
                        raise self._failed(exc) from exc
                try:
                    yield conn
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                self._commit(conn)
            finally:
                if durable:
                    conn.execute("PRAGMA synchronous = NORMAL")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        import sqlite3

        try:
            yield
        except sqlite3.Error as exc:
            raise self._failed(exc) from exc

    @offloaded("read")
    async def change_marker(self) -> tuple[int, int]:
        """Changes whenever anything is committed to the file, by any connection of any
        process (``PRAGMA data_version``), without reading a table."""
        with self._errors(), self._reading() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            return int(version), 0 if self._conn is None else self._conn.total_changes

    # -- Store API --------------------------------------------------------------

    @offloaded("write")
    async def create(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionRecord:
        validate_session_id(session_id)
        text = encode_metadata(session_id, metadata)
        now = time.time()
        with self._errors(), self._tx() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, version, status, created_at, updated_at, "
                "metadata) VALUES (?, 0, 'idle', ?, ?, ?)",
                (session_id, now, now, text),
            )
        record = await self.load(session_id)
        assert record is not None
        return record

    @offloaded("read")
    async def load(
        self, session_id: str, *, known_version: int | None = None
    ) -> SessionRecord | None:
        with self._errors(), self._tx("BEGIN") as conn:
            row = conn.execute(
                f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return None
            snap = row[5]
            raw = []
            if row[0] != known_version:
                raw = conn.execute(
                    f"SELECT {_ENTRY_COLS} FROM entries WHERE session_id = ? AND (seq >= ? OR "
                    "kind = 'snapshot') ORDER BY seq",
                    (session_id, max(snap, 1)),
                ).fetchall()
        entries = [decode_entry(session_id, r[0], r[1], r[2], r[3], r[4]) for r in raw]
        before = [e for e in entries if e.seq < snap]
        entries = entries[len(before) :]
        snapshot = entries.pop(0) if snap and entries and entries[0].seq == snap else None
        return SessionRecord(
            session_id=session_id,
            version=row[0],
            status=row[1],
            snapshot=snapshot,
            entries=entries,
            lease=lease_from_row(session_id, *row[6:11]),
            created_at=row[2],
            updated_at=row[3],
            metadata=decode_object(row[4], what=f"metadata of session {session_id!r}"),
            snapshot_seq=snap,
            earlier_snapshots=before,
        )

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
        now = await self._write_entries(
            session_id, expected_version, encoded, status, lease, sidecar, durable=durable
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
        with self._errors(), self._tx(durable=durable) as conn:
            if conn.execute(sql, args).rowcount != 1:
                self._diagnose(conn, session_id, expected_version, lease, now)
            conn.executemany(
                "INSERT INTO entries (session_id, seq, kind, schema, at, data) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(session_id, e.seq, e.kind, ENTRY_SCHEMA, now, e.text) for e in encoded],
            )
            if sidecar:
                write_sidecar(conn, sidecar)
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
        with self._errors(), self._tx("BEGIN") as conn:
            if (
                conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
                is None
            ):
                raise SessionNotFound(session_id)
            raw = conn.execute(
                f"SELECT {_ENTRY_COLS} FROM entries WHERE session_id = ? AND seq > ? AND seq <= ? "
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
        with self._errors(), self._tx() as conn:
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
        with self._errors(), self._tx() as conn:
            cur = conn.execute(
                "UPDATE sessions SET lease_expires = ? WHERE id = ? AND lease_token = ?",
                (renewed.expires_at, lease.session_id, lease.token),
            )
            if cur.rowcount != 1:
                raise LeaseLost(lease.session_id, "another holder took it or it was released")
        return renewed

    @offloaded("write")
    async def release_lease(self, lease: Lease) -> None:
        with self._errors(), self._tx() as conn:
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
        with self._errors(), self._tx() as conn:
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
        with self._errors(), self._tx("BEGIN") as conn:
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
        from tether.durable.session_list import sqlite_page

        return await sqlite_page(self, status, search, offset, limit)

    @offloaded("write")
    async def delete(self, session_id: str) -> None:
        with self._errors(), self._tx() as conn:
            conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        self._holder.held.pop(session_id, None)

    # -- workers (tether.durable.claims) ---------------------------------------------------

    @offloaded("write")
    async def claim_ready(
        self, *, limit: int, ttl: float = 30.0, exclude: Collection[str] = ()
    ) -> list[Lease]:
        """Take the lease of up to ``limit`` sessions ready to resume (or crashed)."""
        return await sqlite_claim(self, limit, ttl, exclude)

    @offloaded("write")
    async def mark_ready(self, session_id: str) -> bool:
        """Set a ``suspended`` session ``ready`` (a worker handing a paused run back)."""
        return await sqlite_mark_ready(self, session_id)

    async def close(self) -> None:
        with self._threads_lock:
            threads, self._threads = self._threads, None
        if threads is not None:
            await threads.drain()  # the calls already handed over finish first
            threads.stop()
        await asyncio.get_running_loop().run_in_executor(None, self._close_connections)

    def _close_connections(self) -> None:
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
