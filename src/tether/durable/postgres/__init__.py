"""The PostgreSQL backend: :class:`PostgresStore` and what it owns (the pool, every
query, the ``LISTEN`` connection)."""

from tether.durable.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
