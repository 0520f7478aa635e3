"""agent.cancel() landing while a tool call's intent is being journaled (an inline call).

The run's own task runs an inline tool call; it was registered for cancellation before the
intent's write, so a cancel during that write cancelled the write itself: the run ended
without its tool result or final status, and the session stayed ``running``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.events import ToolStarted
from tether.models import ScriptedModel


async def test_a_cancel_during_the_intent_write_ends_the_run_cancelled_and_recorded(
    tmp_path: Path,
):
    db = tmp_path / "race.db"
    ran: list[float] = []

    @tool
    async def nap(seconds: float) -> str:
        """Sleep (a side effect: not idempotent, so its intent is written durably).

        Args:
            seconds: How long.
        """
        ran.append(seconds)
        await asyncio.sleep(seconds)
        return "rested"

    turns = [{"tool_calls": [{"id": "c1", "name": "nap", "args": {"seconds": 30}}]}, "done"]
    store = SQLiteStore(db)
    agent = Agent(model=ScriptedModel(turns), tools=[nap], store=store, session_id="race")
    events = agent.stream("go")
    async for event in events:
        if isinstance(event, ToolStarted):
            break
    lock = sqlite3.connect(db, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the intent's write now waits for this lock
    rest = asyncio.create_task(_drain(events))
    await asyncio.sleep(0.5)
    agent.cancel()  # lands while the write waits
    await asyncio.sleep(0.2)
    lock.execute("ROLLBACK")
    lock.close()
    await asyncio.wait_for(rest, 20)
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "cancelled"
    assert ran == []  # the nap never started
    record = await store.load("race")
    assert record is not None
    assert record.status == "cancelled"
    kinds = [e.kind for e in record.entries]
    answered = record.entries[kinds.index("tool_intent") + 1].data["message"]
    assert answered["role"] == "tool"  # the call is answered, the history stays valid
    assert answered["content"][0]["status"] == "cancelled"
    agent.close()
    await store.close()


async def _drain(events) -> None:  # type: ignore[no-untyped-def]
    async for _ in events:
        pass
