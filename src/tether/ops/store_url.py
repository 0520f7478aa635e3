"""Open the session store named on the command line: an SQLite path or a PostgreSQL URL."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from tether.durable.errors import StoreUnavailable

if TYPE_CHECKING:
    from tether.durable import Store

DEFAULT_STORE = "./tether.db"
_PG_SCHEMES = ("postgresql://", "postgres://")
_SQLITE_SCHEME = "sqlite:///"


def sqlite_path(url: str) -> str | None:
    """The file path of an SQLite store URL (None for PostgreSQL).

    A plain path is used as is; ``sqlite:///rel.db`` is relative and
    ``sqlite:////abs/tether.db`` absolute (the SQLAlchemy convention).
    """
    if url.startswith(_PG_SCHEMES):
        return None
    if url.startswith(_SQLITE_SCHEME):
        path = url[len(_SQLITE_SCHEME) :]
        if not path:
            raise StoreUnavailable(f"store URL {url!r} names no file; use sqlite:///PATH")
        return path
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url)
    if scheme is not None:
        raise StoreUnavailable(
            f"unsupported store URL scheme {scheme.group(1)!r} in {describe(url)!r}; pass an "
            "SQLite path (or sqlite:///PATH) or a postgresql://user@host/db URL"
        )
    if not url:
        raise StoreUnavailable("the store is empty; pass an SQLite path or a postgresql:// URL")
    return url


def describe(url: str) -> str:
    """The store for messages: the SQLite path, or the URL without its password."""
    url = re.sub(r"^([a-z]+://[^:@/]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&]*", r"\1***", url)


def open_store(url: str, *, create: bool = False, read_only: bool = False) -> Store:
    """The store named by ``url``; a missing SQLite file is an error unless ``create``
    (``tether approvers add`` and ``tether serve`` start a new store, readers do not).

    ``read_only`` (the commands that only read) opens an SQLite file without writing
    anything to it: no pragma, no migration, no ``-wal``/``-shm`` created, so a
    read-only mount or a forensic copy can be read and verified. PostgreSQL URLs go to
    :class:`~tether.durable.PostgresStore` unchanged, so query parameters such as
    ``?options=-csearch_path%3Dmyschema`` keep working.
    """
    path = sqlite_path(url)
    if path is None:
        from tether.durable import PostgresStore

        return PostgresStore(url)
    if not os.path.exists(path) and not create:
        raise StoreUnavailable(
            f"no tether store at {path} (run an agent with a session id first, or pass --store)"
        )
    if os.path.isdir(path):
        raise StoreUnavailable(
            f"{path} is a directory; pass the SQLite file, e.g. {path}/tether.db"
        )
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise StoreUnavailable(f"cannot create a tether store at {path}: no directory {parent}")
    from tether.durable import SQLiteStore

    return SQLiteStore(path, read_only=read_only)
