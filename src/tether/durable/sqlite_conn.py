"""SQLiteStore's connections and transactions: opening a file (WAL, schema), the two
connections and their locks, waiting for another connection's write lock (off the
loop only), group commits and the part each call has in one, and SQLite's errors as
store errors. :class:`SQLiteConnections` is the store's base class."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tether.durable.errors import (
    SchemaTooNew,
    SchemaTooOld,
    StoreBusy,
    StoreError,
    StoreFull,
    StoreUnavailable,
)
from tether.durable.schema import SQLITE_MIGRATIONS
from tether.durable.sqlite_io import (
    Batch,
    StoreThreads,
    current_batch,
    reads_on_writer,
    running_inline,
)
from tether.durable.store import STORE_SCHEMA

if TYPE_CHECKING:
    import sqlite3

_BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (primary codes)
_NOT_A_DATABASE = 26  # SQLITE_NOTADB
_FULL = 13  # SQLITE_FULL: disk full, or the file reached max_page_count


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


class SQLiteConnections:
    """The connection side of :class:`~tether.durable.sqlite.SQLiteStore`, which sets
    these attributes in its ``__init__``."""

    path: str
    busy_timeout: float
    read_only: bool
    _conn: sqlite3.Connection | None
    _reader: sqlite3.Connection | None
    _lock: threading.RLock
    _read_lock: threading.RLock
    _one_conn: bool
    _threads: StoreThreads | None
    _threads_lock: threading.Lock

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
        """A StoreError for ``exc``: :class:`StoreBusy` when another connection holds a lock,
        :class:`StoreFull` when the disk is full."""
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in _BUSY_CODES:
            return StoreBusy(
                f"SQLite store {self.path!r} is locked by another connection (waited "
                f"{self.busy_timeout:g} s){detail}; nothing was written, retry in a moment"
            )
        if code is not None and code & 0xFF == _FULL:
            return StoreFull(
                f"SQLite store {self.path!r}: {exc}{detail}; the write was rolled back: "
                "free disk space, then retry"
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

    def _close_connections(self) -> None:
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
