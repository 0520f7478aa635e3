"""A live ``tether serve``-like server whose ``--app`` agents are served at ``/ag-ui``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ag_ui_app import factory
from live_server import live_server

from tether.durable import SQLiteStore
from tether.ops.server import create_app

ROLES = {
    "caller": ["invoke"],
    "other": ["invoke"],
    "boss": ["invoke", "approve:transfer"],
    "admin": ["admin"],
    "viewer": ["viewer"],
}


@dataclass
class Served:
    url: str
    tokens: dict[str, str]
    path: Path
    ran: list[Any] = field(default_factory=list)

    def store(self) -> SQLiteStore:
        return SQLiteStore(self.path)


async def _tokens(path: Path) -> dict[str, str]:
    store = SQLiteStore(path)
    try:
        return {n: (await store.approvers.add(n, r)).token for n, r in ROLES.items()}
    finally:
        await store.close()


@pytest.fixture
def served(private_tmp: Path) -> Iterator[Served]:
    path = private_tmp / "ag-ui.db"
    tokens = asyncio.run(_tokens(path))
    ran: list[Any] = []
    agents_store = SQLiteStore(path)
    app = create_app(SQLiteStore(path), app_factory=factory(agents_store, ran), close_store=True)
    with live_server(app) as url:
        yield Served(url, tokens, path, ran)
