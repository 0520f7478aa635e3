"""Opening an SQLite store's file: the read-only URI, WAL mode, the schema (checked or
migrated), and SQLite's errors as store errors. Functions of a connection and the
store's path; :class:`~tether.durable.sqlite.connections.SQLiteConnections` calls them."""

from __future__ import annotations

import os
import time
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
from tether.durable.store import STORE_SCHEMA

if TYPE_CHECKING:
    import sqlite3

BUSY_CODES = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (primary codes)
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


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite answering that another connection holds a lock."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in BUSY_CODES


def use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch the file to WAL (it stays so). Switching needs an exclusive lock and
    SQLite answers "locked" at once, without its busy handler, while another
    connection (a second store object, another process) opens the same new file:
    retry until ``busy_timeout``."""
    import sqlite3

    if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        return
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def store_error(path: str, busy_timeout: float, exc: sqlite3.Error, detail: str = "") -> StoreError:
    """A StoreError for ``exc``: :class:`StoreBusy` when another connection holds a lock,
    :class:`StoreFull` when the disk is full."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in BUSY_CODES:
        return StoreBusy(
            f"SQLite store {path!r} is locked by another connection (waited "
            f"{busy_timeout:g} s){detail}; nothing was written, retry in a moment"
        )
    if code is not None and code & 0xFF == _FULL:
        return StoreFull(
            f"SQLite store {path!r}: {exc}{detail}; the write was rolled back: "
            "free disk space, then retry"
        )
    return StoreError(f"SQLite store {path!r}: {exc}{detail}")


def unavailable(path: str, read_only: bool, exc: Exception) -> StoreUnavailable:
    """The error for a file that cannot be opened as a store."""
    where = os.path.abspath(path)
    if getattr(exc, "sqlite_errorcode", None) == _NOT_A_DATABASE:
        return StoreUnavailable(
            f"{where!r} is not an SQLite database ({exc}); pass the path of a tether "
            "store (an SQLite file) or a postgresql:// URL."
        )
    if read_only:
        return StoreUnavailable(
            f"cannot open SQLite store at {where!r} read-only: {exc}. "
            "Check that the file exists, is readable and is a tether store."
        )
    return StoreUnavailable(
        f"cannot open SQLite store at {where!r}: {exc}. "
        "Check that the directory exists and is writable, or pass another path."
    )


def check_schema(conn: sqlite3.Connection, path: str) -> None:
    """Read-only: the schema must be exactly the one this tether reads (nothing migrates)."""
    table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tether_schema'"
    ).fetchone()
    found = 0
    if table is not None:
        found = conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] or 0
    if found > STORE_SCHEMA:
        raise SchemaTooNew(f"SQLite store {path!r}", found, STORE_SCHEMA)
    if found < STORE_SCHEMA:
        raise SchemaTooOld(f"SQLite store {path!r}", found, STORE_SCHEMA)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Bring the schema to :data:`STORE_SCHEMA`, inside the caller's write transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS tether_schema (version INTEGER NOT NULL)")
    found = conn.execute("SELECT max(version) FROM tether_schema").fetchone()[0] or 0
    if found > STORE_SCHEMA:
        raise SchemaTooNew(f"SQLite store {path!r}", found, STORE_SCHEMA)
    for version in range(found, STORE_SCHEMA):
        for statement in SQLITE_MIGRATIONS[version]:
            conn.execute(statement)
        conn.execute("INSERT INTO tether_schema (version) VALUES (?)", (version + 1,))
