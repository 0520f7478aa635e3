"""Connections for PostgresStore: lazy pool, schema migration, error translation."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from tether.durable.errors import SchemaTooNew, StoreError, StoreUnavailable
from tether.durable.schema import POSTGRES_MIGRATIONS
from tether.durable.store import STORE_SCHEMA

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    Conn = AsyncConnection[tuple[Any, ...]]

_MIGRATION_LOCK = 0x7E7E_0001  # pg_advisory_xact_lock key for schema creation


class Broken(StoreUnavailable):
    """A pooled connection failed during use (e.g. the server restarted); reads retry once."""


class PgConnector:
    """Opens the pool on first use (after creating/migrating the schema) and lends connections.

    psycopg is imported here, on first use, never when tether is imported.
    """

    def __init__(self, dsn: str, *, min_size: int, max_size: int, connect_timeout: float) -> None:
        self.dsn = dsn
        self.min_size = min_size
        self.max_size = max_size
        self.connect_timeout = connect_timeout
        self._pool: AsyncConnectionPool[Conn] | None = None
        self._opening = asyncio.Lock()

    def where(self) -> str:
        """The server named by the DSN, without the password."""
        try:
            from psycopg.conninfo import conninfo_to_dict

            info = conninfo_to_dict(self.dsn)
            host = str(info.get("host") or "localhost")
            return f"{host}:{info.get('port') or 5432}/{info.get('dbname') or ''}"
        except Exception:
            return re.sub(r"://[^@/]*@", "://***@", self.dsn)

    def unavailable(self, exc: BaseException, doing: str) -> StoreUnavailable:
        return StoreUnavailable(
            f"PostgreSQL store at {self.where()}: {doing} failed: {str(exc).strip()}. "
            "Check that the server is running and reachable and that the DSN is right."
        )

    async def _get_pool(self) -> AsyncConnectionPool[Conn]:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open()
            return self._pool

    async def _open(self) -> AsyncConnectionPool[Conn]:
        try:
            import psycopg
            from psycopg_pool import AsyncConnectionPool
        except ImportError as exc:
            raise StoreError(
                f"PostgresStore needs psycopg 3 with its pool ({exc}); "
                "install it with: pip install 'tether[postgres]'"
            ) from exc

        try:
            conn = await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
            )
        except psycopg.Error as exc:
            raise self.unavailable(exc, "connecting") from exc
        try:
            await self._migrate(conn)
        except psycopg.Error as exc:
            raise self.unavailable(exc, "creating the schema") from exc
        finally:
            await conn.close()

        async def configure(c: Conn) -> None:
            await c.execute("SET synchronous_commit TO off")

        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            self.dsn,
            min_size=self.min_size,
            max_size=self.max_size,
            kwargs={"autocommit": True},
            configure=configure,
            timeout=self.connect_timeout,
            open=False,
        )
        try:
            await pool.open(wait=True, timeout=self.connect_timeout)
        except Exception as exc:
            await pool.close()
            raise self.unavailable(exc, "opening the connection pool") from exc
        return pool

    async def _migrate(self, conn: Conn) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS tether_schema (version INTEGER NOT NULL)"
            )
            cur = await conn.execute("SELECT max(version) FROM tether_schema")
            row = await cur.fetchone()
            found = int(row[0] or 0) if row else 0
            if found > STORE_SCHEMA:
                raise SchemaTooNew(f"PostgreSQL store at {self.where()}", found, STORE_SCHEMA)
            for version in range(found, STORE_SCHEMA):
                for statement in POSTGRES_MIGRATIONS[version]:
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO tether_schema (version) VALUES (%s)", (version + 1,)
                )

    @asynccontextmanager
    async def connection(self, doing: str) -> AsyncIterator[Conn]:
        """A pooled autocommit connection; driver errors become StoreError subclasses."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = await self._get_pool()
        try:
            async with pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise self.unavailable(exc, doing) from exc
        except psycopg.OperationalError as exc:
            raise Broken(str(self.unavailable(exc, doing))) from exc
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL store at {self.where()}: {doing} failed: {exc}") from exc

    # -- Store API --------------------------------------------------------------

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
