"""The ``backend`` / ``store`` fixtures: every contract test runs on all three stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from tether.durable import MemoryStore, PostgresStore, SQLiteStore, Store


@dataclass
class Backend:
    """One store backend; :meth:`open` gives another store object (lease holder) on it."""

    kind: str  # "memory" | "sqlite" | "postgres"
    location: str  # file path or DSN ("" for memory)
    opened: list[Store] = field(default_factory=list)

    def open(self) -> Store:
        store: Store
        if self.kind == "memory":
            first = self.opened[0] if self.opened else None
            store = first.sibling() if isinstance(first, MemoryStore) else MemoryStore()
        elif self.kind == "sqlite":
            store = SQLiteStore(self.location)
        else:
            store = PostgresStore(self.location)
        self.opened.append(store)
        return store

    def needs_processes(self) -> None:
        if self.kind == "memory":
            pytest.skip("MemoryStore is per process")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: object) -> AsyncIterator[Backend]:
    kind = request.param
    if kind == "memory":
        location = ""
    elif kind == "sqlite":
        location = str(tmp_path) + "/tether.db"
    else:
        location = request.getfixturevalue("pg_dsn")
    backend = Backend(kind, location)
    yield backend
    for store in backend.opened:
        await store.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()
