"""The audit trail's records commit with the journal step they describe, or not at all."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from ops_agents import transfer_agent

from tether import PersistenceError
from tether.durable import SQLiteStore
from tether.session import fold

DISK_FULL = (
    "CREATE TRIGGER disk_full BEFORE INSERT ON audit WHEN NEW.event = 'interrupt.raised' "
    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
)


def sql(path: Path, statement: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


async def events(store: SQLiteStore, session: str) -> list[str]:
    return [r.event for r in await store.audit.records(session)]


async def test_a_suspension_that_cannot_be_saved_leaves_journal_approvals_and_audit_agreeing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    store = SQLiteStore(path)
    await store.list_sessions()  # the schema exists
    sql(path, DISK_FULL)  # the write of the suspension's audit records fails, as on a full disk
    ran: list[dict[str, Any]] = []
    agent = transfer_agent(store, "pay", ran)
    with pytest.raises(PersistenceError, match="disk is full"):
        await agent.invoke_async("pay bob")

    # nothing of the suspension was kept: not the journal's, not the approval, not its audit
    view = fold(await store.load("pay"))
    assert view.status != "suspended"
    assert await store.approvals.find(session_id="pay") == []
    assert not {"approval.requested", "interrupt.raised"} & set(await events(store, "pay"))
    assert (await store.audit.verify()).ok
    assert ran == []

    # once the disk has room, a new process recovers the run: it suspends again, in full
    sql(path, "DROP TRIGGER disk_full")
    again = transfer_agent(SQLiteStore(path), "pay", ran)
    result = await again.resume_async()
    assert result.stop_reason == "interrupt"
    [approval] = await store.approvals.pending(session_id="pay")
    assert approval.interrupt_id == result.interrupts[0].id
    records = await store.audit.records("pay")
    raised = [r for r in records if r.event == "interrupt.raised"]
    assert [r.data["approval_id"] for r in raised] == [approval.id]
    assert records[-1].event == "invocation.end"
    assert records[-1].data["stop_reason"] == "interrupt"
    assert (await store.load("pay")).status == "suspended"

    await store.approvals.decide(approval.id, "approve", decided_by="alice")
    answers = await store.approvals.answers_for("pay")
    done = await transfer_agent(SQLiteStore(path), "pay", ran).resume_async(answers)
    assert done.stop_reason == "end_turn"
    assert len(ran) == 1
    assert (await store.audit.verify()).ok
