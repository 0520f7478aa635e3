"""Fixtures for the approvals / audit tests: real stores (memory, SQLite file, PostgreSQL)
and small agents whose runs suspend the three ways that ask a human."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tether.durable import MemoryStore, PostgresStore, SQLiteStore, Store

sys.path.insert(0, str(Path(__file__).parent))  # the tests import ops_agents


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
