"""A live server on a seeded SQLite store, shared by the API, auth and schemathesis tests."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from live_server import live_server, seed
from ops_agents import validating_agent

from tether.durable import SQLiteStore
from tether.ops.server import create_app


@dataclass
class Seeded:
    url: str
    tokens: dict[str, str]
    """approver name -> bearer token; "removed" is the token of an approver since removed."""
    approval_id: str
    path: Path


async def _seed_file(path: Path) -> tuple[dict[str, str], str]:
    store = SQLiteStore(path)
    try:
        return await seed(store)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def seeded_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    """One server for a module's read-mostly tests (they must leave pay-1 pending)."""
    path = tmp_path_factory.mktemp("server") / "inbox.db"
    tokens, approval_id = asyncio.run(_seed_file(path))
    app = create_app(SQLiteStore(path), app_factory=validating_agent, close_store=True)
    with live_server(app) as url:
        yield Seeded(url, tokens, approval_id, path)
