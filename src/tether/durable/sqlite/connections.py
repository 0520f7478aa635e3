"""SQLiteStore's connections and transactions: the two connections and their locks
(opened by :mod:`tether.durable.sqlite.opening`), waiting for another connection's write
lock (off the loop only), group commits and the part each call has in one, and SQLite's
errors as store errors. :class:`SQLiteConnections` is the store's base class; its public handles
(``transaction``, and what :class:`~tether.durable.sqlite.threads.ThreadedStore` names)
are what the store's collaborators and threads use."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from tether.durable.errors import StoreError, StoreUnavailable
from tether.durable.sqlite.opening import (
    check_schema,
    is_busy,
    migrate,
    read_only_uri,
    store_error,
    unavailable,
    use_wal,
)
from tether.durable.sqlite.threads import (
    Batch,
    StoreThreads,
    current_batch,
    offloaded,
    reads_on_writer,
    running_inline,
)

if TYPE_CHECKING:
    import sqlite3


class SQLiteConnections:
    """The connection side of :class:`~tether.durable.sqlite.SQLiteStore`."""

    def __init__(self, path: str, busy_timeout: float, read_only: bool) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()  # RLock: an inline call takes it, then _writing()
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.RLock()
        # an in-memory database is private to its connection: reads share the writer
        self._one_conn = path == ":memory:" or path.startswith("file::memory:")
        self._threads: StoreThreads | None = None
        self._checkpointer: sqlite3.Connection | None = None
        self._checkpoint_lock = threading.Lock()
        self._threads_lock = threading.Lock()

    # -- the public handles -----------------------------------------------------------

    @contextmanager
    def transaction(
        self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False
    ) -> Iterator[sqlite3.Connection]:
        """One transaction (see ``_tx``), SQLite's errors raised as :class:`StoreError`: what
        the store's collaborators (approvals, audit, approvers, claims, the sessions list)
        run their queries in. Call it from an ``@offloaded`` method."""
        with self._errors(), self._tx(begin, durable=durable) as conn:
            yield conn

    def store_threads(self) -> StoreThreads:
        """The writer and reader threads of this store object (started on demand)."""
        with self._threads_lock:
            if self._threads is None:
                self._threads = StoreThreads(self)
            return self._threads

    @property
    def one_connection(self) -> bool:
        return self._one_conn

    @property
    def reader_open(self) -> bool:
        return self._reader is not None

    def hold_at_once(self, write: bool) -> threading.RLock | None:
        """The write (or read) connection's lock, taken, when that connection is open and
        its lock is free at once; else None. The caller releases it."""
        conn, lock = (self._conn, self._lock) if write else (self._reader, self._read_lock)
        if conn is None or not lock.acquire(blocking=False):
            return None
        return lock

    def group_commit(self, durable: bool) -> AbstractContextManager[Batch]:
        """One group commit (``_batch``), for the writer thread."""
        return self._batch(durable)

    def checkpoint(self) -> None:
        """Copy the WAL back into the database (PASSIVE: waits for nobody), on a connection
        of its own: the write connection stays free, so writes (inline ones too) go on
        while the pages are copied, instead of waiting for a checkpoint of many ms."""
        if self._one_conn:
            with self._writing() as conn:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            return
        with self._checkpoint_lock:
            if self._conn is None:  # closed meanwhile: the next writer's checkpoints do it
                return
            if self._checkpointer is None:
                self._checkpointer = self._open(migrate=False)
            self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    @offloaded("read")
    async def change_marker(self) -> tuple[int, int]:
        """Changes whenever anything is committed to the file, by any connection of any
        process (``PRAGMA data_version``), without reading a table."""
        with self._errors(), self._reading() as conn:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            return int(version), 0 if self._conn is None else self._conn.total_changes

    async def close(self) -> None:
        """Let the calls already handed over finish, stop the threads, close the
        connections (both open again on the next call)."""
        with self._threads_lock:
            threads, self._threads = self._threads, None
        if threads is not None:
            await threads.drain()  # the calls already handed over finish first
            threads.stop()
        await asyncio.get_running_loop().run_in_executor(None, self._close_connections)

    # -- connections and transactions ---------------------------------------------------

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
                check_schema(conn, self.path)
            elif migrate:
                use_wal(conn, self.busy_timeout)
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
                if not is_busy(exc) or running_inline():
                    raise self._failed(exc) from exc
                now = time.monotonic()
                deadline = deadline or now + self.busy_timeout
                if now >= deadline:
                    raise self._failed(exc) from exc
                time.sleep(min(pause, deadline - now))
                pause = min(pause * 2, 0.025)

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
        return store_error(self.path, self.busy_timeout, exc, detail)

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        return unavailable(self.path, self.read_only, exc)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        self._begin_immediate(conn)
        try:
            migrate(conn, self.path)
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
        with self._checkpoint_lock:
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
        with self._read_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
