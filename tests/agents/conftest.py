"""Fixtures shared by the sub-agent tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the tree's store lives: a SQLite file or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "tether.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn
