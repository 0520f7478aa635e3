"""The SQLite backend: :class:`SQLiteStore` and what it owns (connections, threads,
every query)."""

from tether.durable.sqlite.store import SQLiteStore

__all__ = ["SQLiteStore"]
