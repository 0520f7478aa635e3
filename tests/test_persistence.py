"""Opening a durable session: what a process that already holds the session reads again."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from history import assert_cancelled_write_counted

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.durable.sqlite import store as sqlite_module
from tether.models import ScriptedModel
from tether.persistence import close_session, open_session


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


async def test_taking_the_lease_can_create_the_session_in_the_same_step(stores):
    from tether.durable import SessionBusy, SessionNotFound
    from tether.errors import ConfigurationError

    store = stores()
    with pytest.raises(SessionNotFound):
        await store.acquire_lease("new-one")
    lease = await store.acquire_lease("new-one", create=True)
    record = await store.load("new-one")
    assert record is not None
    assert (record.version, record.status, record.metadata) == (0, "idle", {})
    assert record.lease is not None
    assert record.lease.token == lease.token
    with pytest.raises(SessionBusy):  # an existing session is not created again
        await stores().acquire_lease("new-one", create=True)
    with pytest.raises(ConfigurationError, match="session id is empty"):
        await store.acquire_lease("", create=True)
    assert [s.session_id for s in await store.list_sessions()] == ["new-one"]


class CountingStore(SQLiteStore):
    """A real SQLite store that counts its transactions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.transactions: list[str] = []

    def _tx(self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False) -> Any:
        self.transactions.append(begin)
        return super()._tx(begin, durable=durable)


async def test_a_new_session_is_created_and_leased_in_one_transaction(tmp_path):
    store = CountingStore(tmp_path / "s.db")
    agent = adder(store, "fresh")
    journal = await open_session(agent)
    await close_session(agent, journal)
    # create + lease (one write), the load (one read), the release (one write)
    assert store.transactions == ["BEGIN IMMEDIATE", "BEGIN", "BEGIN IMMEDIATE"]


async def test_load_with_the_known_version_reads_no_entries(stores):
    store = stores()
    await store.create("k")
    written = await store.append("k", 0, [("message", {"message": {"role": "user"}})] * 3)
    current = await store.load("k", known_version=written[-1].seq)
    assert current is not None
    assert (current.version, current.entries, current.snapshot) == (3, [], None)
    stale = await store.load("k", known_version=2)
    assert stale is not None
    assert [e.seq for e in stale.entries] == [1, 2, 3]
    assert await store.load("missing", known_version=3) is None


async def test_audit_records_queued_while_an_append_is_awaited_are_not_lost(
    tmp_path: Path,
) -> None:
    """Parallel tools: one's journal write is in flight (the store runs off the loop)
    while another's ``tool.executed`` record is queued; that record goes with the next
    write instead of being dropped."""

    @tool(read_only=True)
    async def look(n: int) -> str:
        """Look something up."""
        await asyncio.sleep(0.001 * n)
        return f"seen {n}"

    calls = [{"name": "look", "args": {"n": n}} for n in range(6)]
    store = SQLiteStore(str(tmp_path / "a.db"))
    agent = Agent(
        model=ScriptedModel([{"tool_calls": calls}, "done"]),
        tools=[look],
        store=store,
        session_id="par",
    )
    assert (await agent.invoke_async("go")).text == "done"
    executed = [r for r in await store.audit.records("par") if r.event == "tool.executed"]
    assert len(executed) == len(calls)
    await store.close()


async def test_a_journal_write_cancelled_in_flight_still_counts(tmp_path: Path) -> None:
    """The caller is cancelled while its append waits on a store that really awaits (as
    PostgreSQL does): the write has committed (it cannot be taken back), so the journal
    learns its version and the next append does not conflict with it."""

    class AwaitingStore(SQLiteStore):
        """Commits, then waits before answering: a cancel lands mid-write."""

        blocks_loop = False

        def __init__(self, path: str) -> None:
            super().__init__(path)
            self.hold: asyncio.Event | None = None
            self.committed = asyncio.Event()

        async def append(self, *args: Any, **kwargs: Any) -> Any:
            written = await super().append(*args, **kwargs)
            if self.hold is not None:
                self.committed.set()
                await self.hold.wait()
            return written

    store = AwaitingStore(str(tmp_path / "c.db"))
    agent = Agent(model=ScriptedModel(["x"]), store=store, session_id="c")
    journal = await open_session(agent)
    store.hold = asyncio.Event()
    write = asyncio.create_task(journal.append("status", {"status": "running"}))
    await store.committed.wait()
    write.cancel()
    await asyncio.sleep(0)
    store.hold.set()
    store.hold = None
    await assert_cancelled_write_counted(agent, journal, write)
