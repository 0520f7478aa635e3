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


class CountingStore(SQLiteStore):
    """A real SQLite store that counts its write transactions."""

    writes = 0

    def _tx(self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False) -> Any:
        if begin != "BEGIN":
            CountingStore.writes += 1
        return super()._tx(begin, durable=durable)


async def test_audit_and_agent_hooks_records_commit_with_the_journal_steps(tmp_path: Path) -> None:
    from tether import Agent, tool
    from tether.control.agent_hooks import AllowAll
    from tether.models import ScriptedModel

    @tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def script(messages: list[Any], tools: Any) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "done"}
        return {"tool_calls": [{"name": "add", "args": {"a": 1, "b": len(messages)}}]}

    store = CountingStore(tmp_path / "s.db")
    agent = Agent(
        model=ScriptedModel(script),
        tools=[add],
        store=store,
        session_id="s",
        agent_hooks=[AllowAll()],
    )
    await agent.invoke_async("first")
    audit_before = len(await store.audit.records("s"))
    record = await store.load("s")
    assert record is not None
    CountingStore.writes = 0
    await agent.invoke_async("second")
    # lease, the tool's intent (before its side effect), the tool message, the run's end,
    # the AGENT-HOOKS agent_shutdown record (emitted after the run's end), the lease's
    # release: the audit trail and the other AGENT-HOOKS records add no transaction
    assert CountingStore.writes == 6
    new = [r.event for r in (await store.audit.records("s"))[audit_before:]]
    assert new == ["invocation.start", "tool.executed", "invocation.end"]
    entries = await store.read_entries("s", record.version)
    hooks = [e for e in entries if e.kind == "audit"]
    assert len(hooks) == 10  # every emission's record, agent_shutdown included
    assert (await store.audit.verify()).ok


async def test_a_suspension_outside_a_run_is_saved_whole_or_not_at_all(tmp_path: Path) -> None:
    from tether.control.interrupts import Interrupt
    from tether.messages import ToolCall
    from tether.persistence import close_session, open_session
    from tether.session import IN_DOUBT, journal_suspend

    path = tmp_path / "s.db"
    store = SQLiteStore(path)
    agent = transfer_agent(store, "doubt", [])
    call = ToolCall("c1", "transfer", {"to": "bob", "amount": 1, "api_token": "x"})
    ask = [Interrupt("i1", IN_DOUBT, "did it run?", "in_doubt", IN_DOUBT, call)]
    await store.list_sessions()
    sql(path, DISK_FULL)
    journal = await open_session(agent)
    with pytest.raises(PersistenceError, match="disk is full"):
        await journal_suspend(journal, ask, "in doubt")
    await close_session(agent, journal)
    assert (await store.load("doubt")).status != "suspended"
    assert await store.approvals.find(session_id="doubt") == []
    assert await events(store, "doubt") == []

    sql(path, "DROP TRIGGER disk_full")
    journal = await open_session(agent)
    await journal_suspend(journal, ask, "in doubt")
    await close_session(agent, journal)
    assert (await store.load("doubt")).status == "suspended"
    [approval] = await store.approvals.pending(session_id="doubt")
    assert approval.source == "in_doubt"
    assert await events(store, "doubt") == ["approval.requested", "interrupt.raised"]
