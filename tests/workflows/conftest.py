"""``backend``: a workflow test on MemoryStore, SQLite and PostgreSQL, resumed in a second
process where the store outlives one (``workflow_agents.Backend``)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import Backend


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    db: str | None = None
    if request.param == "sqlite":
        db = str(tmp_path / "wf.db")
    elif request.param == "postgres":
        db = request.getfixturevalue("pg_dsn")
    made = Backend(request.param, db, tmp_path / "effects")
    yield made
    for store in made.made:
        await store.close()
