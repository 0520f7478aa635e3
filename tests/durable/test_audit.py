"""The hash-chained audit log: what an agent run records, and tamper detection on SQLite
and PostgreSQL (edit, delete, reorder, truncate)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest
from ops_agents import SECRET, transfer_agent

from tether import Agent, tool
from tether.control import BeforeToolCall, Deny, InterventionHandler
from tether.durable import PostgresStore, SQLiteStore, args_sha256
from tether.durable.store import STORE_SCHEMA
from tether.errors import TetherError
from tether.limits import Limits
from tether.models import ScriptedModel


async def test_an_approval_flow_is_audited_without_payloads(stores):
    store = stores()
    ran: list[dict[str, Any]] = []
    await transfer_agent(store, "aud", ran).invoke_async("pay")
    [approval] = await store.approvals.pending()
    await store.approvals.decide(approval.id, "approve", decided_by="alice", note="fine")
    worker = transfer_agent(stores(), "aud", ran)
    await worker.resume_async(await store.approvals.answers_for("aud"))
    records = await store.audit.records(session_id="aud")
    events = [r.event for r in records]
    assert events == [
        "invocation.start",
        "policy.verdict",
        "approval.requested",
        "interrupt.raised",
        "invocation.end",
        "approval.decided",
        "interrupt.answered",
        "invocation.start",
        "policy.verdict",
        "tool.executed",
        "invocation.end",
    ]
    by = {r.event: r.data for r in records}
    assert by["policy.verdict"] == {
        "point": "before_tool_call",
        "policy": "AskFirst",
        "action": "Confirm",
        "tool": "transfer",
        "call_id": worker.messages[1].tool_calls[0].id,
    }
    assert by["approval.decided"]["decided_by"] == "alice"
    assert by["interrupt.answered"] == {"answers": {approval.interrupt_id: "approve"}}
    tool_run = by["tool.executed"]
    assert tool_run["args_sha256"] == args_sha256({"to": "bob", "amount": 500, "api_token": SECRET})
    assert tool_run["status"] == "ok"
    assert tool_run["duration_ms"] >= 0
    exported = json.dumps(await store.audit.export())
    assert SECRET not in exported
    assert "bob" not in exported  # no arguments at all, only their hash
    report = await store.audit.verify()
    assert report.ok
    assert report.checked == len(records)
    assert report.head == (records[-1].seq, records[-1].hash)


async def test_denials_limit_stops_and_cancellations_are_recorded(stores):
    store = stores()

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    class NoAdd(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny:
            return Deny("not today")

    loop = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}
    agent = Agent(
        model=ScriptedModel([loop, loop, loop]),
        tools=[add],
        interventions=[NoAdd()],
        limits=Limits(turns=2),
        store=store,
        session_id="lim",
    )
    result = await agent.invoke_async("go")
    assert result.stop_reason == "limit_turns"
    records = await store.audit.records(session_id="lim")
    events = [r.event for r in records]
    assert events.count("policy.verdict") == 2
    assert events[-2:] == ["limit.stop", "invocation.end"]
    assert records[-1].data["stop_reason"] == "limit_turns"
    assert {r.data["status"] for r in records if r.event == "tool.executed"} == {"denied"}

    cancelling = Agent(
        model=ScriptedModel([loop, "never"]), tools=[add], store=store, session_id="can"
    )
    cancelling.on(BeforeToolCall)(lambda event: event.agent.cancel())
    assert (await cancelling.invoke_async("go")).stop_reason == "cancelled"
    events = [r.event for r in await store.audit.records(session_id="can")]
    assert events[-2:] == ["cancellation", "invocation.end"]
    assert (await store.audit.verify()).ok


async def test_concurrent_appends_from_many_store_objects_keep_one_chain(stores):
    writers = [stores() for _ in range(4)]

    async def write(index: int, store: Any) -> None:
        for n in range(25):
            await store.audit.append("test.note", {"writer": index, "n": n})

    await asyncio.gather(*(write(i, s) for i, s in enumerate(writers)))
    report = await writers[0].audit.verify()
    assert report.ok
    assert report.checked == 100
    assert [r.seq for r in await writers[1].audit.records()] == list(range(1, 101))
    assert len(await writers[2].audit.records(after=90)) == 10


# -- tampering ------------------------------------------------------------------------


def sqlite_exec(path: Any, sql: str, *args: Any) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, args)
    conn.close()


TAMPER = {
    "edit": (
        "UPDATE audit SET body = replace(body, '\"n\":3', '\"n\":33') WHERE seq = 4",
        4,
        "record 4 was edited",
    ),
    "delete": ("DELETE FROM audit WHERE seq = 3", 3, "record 3 is missing"),
    "reorder": (
        "UPDATE audit SET seq = CASE seq WHEN 2 THEN 3 WHEN 3 THEN 2 END WHERE seq IN (2, 3)",
        2,
        "holds the body of record 3: records were reordered",
    ),
    "truncate": ("DELETE FROM audit WHERE seq >= 5", 5, "truncated"),
}


async def fill(store: Any) -> Any:
    for n in range(6):
        await store.audit.append("test.note", {"n": n}, session_id="s")
    report = await store.audit.verify()
    assert report.ok
    return report


# SQLite checks the primary key per row: a reorder goes through a free seq
REORDER_STEPS = (
    "UPDATE audit SET seq = -1 WHERE seq = 2",
    "UPDATE audit SET seq = 2 WHERE seq = 3",
    "UPDATE audit SET seq = 3 WHERE seq = -1",
)


async def tampered_sqlite(tmp_path: Any, *statements: str) -> tuple[Any, str]:
    """A SQLite store at ``tmp_path / "t.db"``, filled and closed, then ``statements`` run on
    its file one by one; returns the path and the audit head it had before."""
    db = tmp_path / "t.db"
    store = SQLiteStore(db)
    head = (await fill(store)).head
    await store.close()
    for sql in statements:
        sqlite_exec(db, sql)
    return db, head


async def tampered_postgres(pg_dsn: str, *statements: str) -> None:
    """The Postgres store at ``pg_dsn``, filled and closed, then ``statements`` run on it."""
    psycopg = pytest.importorskip("psycopg")
    store = PostgresStore(pg_dsn)
    await fill(store)
    await store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


@pytest.mark.parametrize("kind", list(TAMPER))
async def test_sqlite_tampering_is_detected(tmp_path, kind):
    sql, position, reason = TAMPER[kind]
    db, _ = await tampered_sqlite(tmp_path, *(REORDER_STEPS if kind == "reorder" else (sql,)))
    report = await SQLiteStore(db).audit.verify()
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad[0] == position
    assert reason in report.first_bad[1]


@pytest.mark.parametrize("kind", list(TAMPER))
async def test_postgres_tampering_is_detected(pg_dsn, kind):
    sql, position, reason = TAMPER[kind]
    # the primary key is checked per row here too: the same steps through a free seq
    await tampered_postgres(pg_dsn, *(REORDER_STEPS if kind == "reorder" else (sql,)))
    fresh = PostgresStore(pg_dsn)
    report = await fresh.audit.verify()
    await fresh.close()
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad[0] == position
    assert reason in report.first_bad[1]


async def test_memory_store_audit_detects_an_edit():
    from tether.durable import MemoryStore

    store = MemoryStore()
    await fill(store)
    rows = store._ops.audit
    rows[1] = rows[1]._replace(body=rows[1].body.replace('"n":1', '"n":9'))
    report = await store.audit.verify()
    assert report.first_bad is not None
    assert report.first_bad[0] == 2


# -- the query columns (at, event, session_id) are checked against the hashed body --------

COLUMN_TAMPER = {
    "session_id": ("UPDATE audit SET session_id = 'zz' WHERE seq = 3", "session_id column"),
    "session_id_null": ("UPDATE audit SET session_id = NULL WHERE seq = 3", "session_id column"),
    "event": ("UPDATE audit SET event = 'test.other' WHERE seq = 3", "event column"),
    "at": ("UPDATE audit SET at = at + 1 WHERE seq = 3", "at column"),
}


@pytest.mark.parametrize("kind", list(COLUMN_TAMPER))
async def test_sqlite_column_tampering_is_detected(tmp_path, kind):
    sql, reason = COLUMN_TAMPER[kind]
    db, head = await tampered_sqlite(tmp_path, sql)
    fresh = SQLiteStore(db)
    report = await fresh.audit.verify()
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad[0] == 3
    assert "record 3 was edited" in report.first_bad[1]
    assert reason in report.first_bad[1]
    assert report.head == head  # the head itself was not touched: only the column check sees it
    await fresh.close()


@pytest.mark.parametrize("kind", list(COLUMN_TAMPER))
async def test_postgres_column_tampering_is_detected(pg_dsn, kind):
    sql, reason = COLUMN_TAMPER[kind]
    await tampered_postgres(pg_dsn, sql)
    fresh = PostgresStore(pg_dsn)
    report = await fresh.audit.verify()
    await fresh.close()
    assert not report.ok
    assert report.first_bad is not None
    assert report.first_bad[0] == 3
    assert reason in report.first_bad[1]


OLD_AUDIT_SCHEMA = (
    "CREATE TABLE tether_schema (version INTEGER NOT NULL)",
    # the current schema version (the column check came with version 2)
    "INSERT INTO tether_schema (version) VALUES "
    + ", ".join(f"({v})" for v in range(1, STORE_SCHEMA + 1)),
    """CREATE TABLE audit (seq INTEGER PRIMARY KEY, at REAL NOT NULL, event TEXT NOT NULL,
        session_id TEXT, body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)""",
    "CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, "
    "hash TEXT NOT NULL)",
)


def test_a_chain_written_before_the_column_check_verifies_and_detects_column_edits(tmp_path):
    """A store of the current schema version whose rows were written by the old code (built
    here by SQL, as that code wrote them) needs no rewrite: its body already holds every
    column, so verify checks the columns of old records too."""
    from tether.durable.audit import GENESIS, AuditEvent, body_text, link

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for statement in OLD_AUDIT_SCHEMA:
        conn.execute(statement)
    prev = GENESIS
    for seq in range(1, 4):
        body = body_text(seq, 1000.0 + seq, AuditEvent("test.note", {"n": seq}, "pay-1"))
        digest = link(prev, body)
        conn.execute(
            "INSERT INTO audit VALUES (?, ?, 'test.note', 'pay-1', ?, ?, ?)",
            (seq, 1000.0 + seq, body, prev, digest),
        )
        prev = digest
    conn.execute("INSERT INTO audit_head VALUES (1, 3, ?)", (prev,))
    conn.commit()
    conn.close()

    async def check() -> Any:
        store = SQLiteStore(db)
        try:
            return await store.audit.verify(), await store.audit.records(session_id="pay-1")
        finally:
            await store.close()

    report, records = asyncio.run(check())
    assert report.ok
    assert report.checked == 3
    assert [r.seq for r in records] == [1, 2, 3]
    sqlite_exec(db, "UPDATE audit SET session_id = 'zz' WHERE seq = 2")
    report, records = asyncio.run(check())
    assert [r.seq for r in records] == [1, 3]  # hidden from the per-session view ...
    assert report.first_bad is not None  # ... and verify says so
    assert report.first_bad[0] == 2
    assert "session_id column is 'zz' but its hashed body says 'pay-1'" in report.first_bad[1]


# -- a missing or garbled head ----------------------------------------------------------

HEAD_DAMAGE = {
    "missing": ("DELETE FROM audit_head", "is missing"),
    "seq": ("UPDATE audit_head SET seq = 'six'", "its seq is 'six'"),
    "hash": ("UPDATE audit_head SET hash = 'garbled'", "its hash is 'garbled'"),
    "null_hash": ("UPDATE audit_head SET hash = 42", "its hash is '42'"),
}


@pytest.mark.parametrize("kind", list(HEAD_DAMAGE))
async def test_a_damaged_head_is_a_clear_error_and_nothing_is_appended(tmp_path, kind):
    from tether.durable import AuditHeadCorrupt

    sql, detail = HEAD_DAMAGE[kind]
    db, _ = await tampered_sqlite(tmp_path, sql)
    fresh = SQLiteStore(db)
    with pytest.raises(AuditHeadCorrupt, match="the audit head") as verify_error:
        await fresh.audit.verify()
    assert detail in str(verify_error.value)
    with pytest.raises(AuditHeadCorrupt):
        await fresh.audit.append("test.note", {"n": 99}, session_id="s")
    assert [r.seq for r in await fresh.audit.records()] == [1, 2, 3, 4, 5, 6]  # still readable
    await fresh.close()


async def test_postgres_missing_head_is_a_clear_error(pg_dsn):
    from tether.durable import AuditHeadCorrupt

    await tampered_postgres(pg_dsn, "DELETE FROM audit_head")
    fresh = PostgresStore(pg_dsn)
    try:
        with pytest.raises(AuditHeadCorrupt, match="is missing"):
            await fresh.audit.verify()
        with pytest.raises(AuditHeadCorrupt, match="is missing"):
            await fresh.audit.append("test.note", {}, session_id="s")
    finally:
        await fresh.close()


def test_an_agent_run_on_a_store_with_a_missing_head_fails_naming_it(tmp_path):
    from tether.durable import AuditHeadCorrupt

    db = tmp_path / "t.db"
    asyncio.run(SQLiteStore(db).audit.verify())  # creates the store
    sqlite_exec(db, "DELETE FROM audit_head")
    agent = transfer_agent(SQLiteStore(db), "run", [])
    with pytest.raises(TetherError, match="audit head") as caught:
        agent("pay")
    chain_of = []
    error: BaseException | None = caught.value
    while error is not None:
        chain_of.append(error)
        error = error.__cause__
    assert any(isinstance(e, AuditHeadCorrupt) for e in chain_of), chain_of
    assert "the audit head (table audit_head, row id 1) is missing" in str(caught.value)
    assert "TypeError" not in str(caught.value)
