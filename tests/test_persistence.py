"""Opening a durable session: what a process that already holds the session reads again."""

from typing import Any

import pytest

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.durable import sqlite as sqlite_module
from tether.models import ScriptedModel


@tool
async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def adder(store: Any, session_id: str) -> Agent:
    def script(messages, tools):
        if messages[-1].role == "tool":
            return {"text": f"sum is {messages[-1].tool_results[0].content}"}
        return {"tool_calls": [{"name": "add", "args": {"a": 2, "b": len(messages)}}]}

    return Agent(model=ScriptedModel(script), tools=[add], store=store, session_id=session_id)


class Decoded:
    """Counts journal entries the SQLite store decodes (its decode_entry, wrapped)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = sqlite_module.decode_entry

        def counting(*args: Any) -> Any:
            self.count += 1
            return real(*args)

        monkeypatch.setattr(sqlite_module, "decode_entry", counting)


async def test_the_process_that_wrote_the_journal_does_not_read_it_back(tmp_path, monkeypatch):
    store = SQLiteStore(tmp_path / "s.db")
    agent = adder(store, "long")
    for i in range(30):  # 120 messages, 240+ entries
        await agent.invoke_async(f"question {i}")
    decoded = Decoded(monkeypatch)
    result = await agent.invoke_async("one more")
    assert result.text.startswith("sum is")
    # only the entries this invocation appends are decoded (the store hands them back);
    # nothing written by earlier invocations is read again
    assert decoded.count <= 10, decoded.count
    assert len(agent.messages) == 124


async def test_a_write_by_another_store_object_is_still_seen(tmp_path):
    first = adder(SQLiteStore(tmp_path / "s.db"), "shared")
    await first.invoke_async("from the first")
    second = adder(SQLiteStore(tmp_path / "s.db"), "shared")
    await second.invoke_async("from the second")
    await first.invoke_async("first again")
    texts = [m.text for m in first.messages if m.role == "user"]
    assert texts == ["from the first", "from the second", "first again"]
