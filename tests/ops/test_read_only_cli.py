"""The read-only commands open the store read-only: a read-only mount or a forensic copy can
be listed, shown and verified, and nothing is written to it (no pragma, no migration, no
-wal/-shm files)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from ops_agents import transfer_agent
from typer.testing import CliRunner

from tether.durable import SQLiteStore
from tether.durable.store import STORE_SCHEMA
from tether.ops.cli import app

ENV: dict[str, str | None] = {"COLUMNS": "250", "NO_COLOR": "1", "TETHER_STORE": None}
SRC = Path(__file__).resolve().parents[2] / "src"


def cli(*args: str) -> Any:
    result = CliRunner(env=ENV).invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def fingerprint(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A closed store (one suspended session, one pending approval) copied read-only."""
    live = tmp_path / "live" / "ops.db"
    live.parent.mkdir()
    store = SQLiteStore(live)
    transfer_agent(store, "pay", [])("pay bob")
    asyncio.run(store.close())  # checkpoints the WAL into the file
    frozen = tmp_path / "copy" / "ops.db"
    frozen.parent.mkdir()
    shutil.copy(live, frozen)
    frozen.chmod(0o444)
    return frozen


def read_commands(db: str, approval_id: str) -> list[tuple[str, ...]]:
    return [
        ("sessions", "list", "--store", db),
        ("sessions", "show", "pay", "--store", db),
        ("sessions", "export", "pay", "--store", db),
        ("approvals", "list", "--store", db),
        ("approvals", "list", "--all", "--store", db),
        ("approvals", "show", approval_id, "--store", db),
        ("approvers", "list", "--store", db),
        ("audit", "verify", "--store", db),
        ("audit", "show", "pay", "--store", db),
        ("audit", "export", "--store", db),
    ]


def test_read_commands_write_nothing_to_the_store(copy: Path) -> None:
    [approval] = asyncio.run(_pending(copy))
    before = fingerprint(copy)
    for command in read_commands(str(copy), approval):
        out = cli(*command)
        assert out.exit_code == 0, (command, out.output)
        assert fingerprint(copy) == before, command  # bytes, mtime, no -wal/-shm
    assert "audit log ok" in cli("audit", "verify", "--store", str(copy)).stdout


async def _pending(path: Path) -> list[str]:
    store = SQLiteStore(path, read_only=True)
    try:
        return [a.id for a in await store.approvals.pending()]
    finally:
        await store.close()


def test_a_store_too_old_to_read_is_refused_not_migrated(tmp_path: Path) -> None:
    import sqlite3

    from tether.durable.schema import SQLITE_MIGRATIONS

    db = tmp_path / "v1.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE tether_schema (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO tether_schema VALUES (1)")
    for statement in SQLITE_MIGRATIONS[0]:
        conn.execute(statement)
    conn.commit()
    conn.close()
    before = fingerprint(db)
    out = cli("approvals", "list", "--store", str(db))
    assert out.exit_code == 1
    assert f"has store schema version 1, older than version {STORE_SCHEMA}" in out.stderr
    assert "opened read-only, so it is not upgraded" in out.stderr
    assert fingerprint(db) == before


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="needs root and setpriv to run the CLI as an unprivileged user",
)
def test_a_read_only_directory_as_an_unprivileged_user(copy: Path) -> None:
    """The reported failure: on a read-only directory `sessions list`, `approvals list` and
    `audit verify` said "attempt to write a readonly database"."""
    [approval] = asyncio.run(_pending(copy))
    folder = Path(tempfile.mkdtemp(prefix="tether-ro-"))  # outside root's private pytest dir
    try:
        db = folder / "ops.db"
        shutil.copy(copy, db)
        db.chmod(0o444)
        folder.chmod(0o555)
        before = fingerprint(db)
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(SRC), "COLUMNS": "200"}
        code = "import sys; from tether.ops.cli import app; app(sys.argv[1:])"
        for command in read_commands(str(db), approval):
            done = subprocess.run(
                [
                    "setpriv",
                    "--reuid=65534",
                    "--regid=65534",
                    "--clear-groups",
                    sys.executable,
                    "-c",
                    code,
                    *command,
                ],
                capture_output=True,
                text=True,
                env={**env, "NO_COLOR": "1"},
                cwd="/",
                timeout=60,
            )
            assert done.returncode == 0, (command, done.stderr)
            assert "readonly" not in done.stderr
        assert fingerprint(db) == before
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
