"""SQLiteStore off the event loop: calls that can wait run on the store's threads (a lone
call that cannot runs inline), concurrent writes share group commits, a failing call in a group commit rolls back alone, a group commit
wakes its callers a few per loop turn, a cancelled caller's write still counts, and store
objects opening one new file at once all succeed."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from history import assert_cancelled_write_counted

from tether import Agent
from tether.durable import SessionConflict, SQLiteStore
from tether.durable.audit import AuditEvent
from tether.durable.sqlite.loop_side import RELEASE_PER_TURN
from tether.durable.sqlite.threads import Batch
from tether.models import ScriptedModel
from tether.persistence import open_session


class WatchedStore(SQLiteStore):
    """A real SQLite store noting the thread of every transaction and every group commit."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.threads: set[int] = set()
        self.batches: list[bool] = []

    @contextlib.contextmanager
    def _tx(self, begin: str = "BEGIN IMMEDIATE", *, durable: bool = False) -> Iterator[Any]:
        self.threads.add(threading.get_ident())
        with super()._tx(begin, durable=durable) as conn:
            yield conn

    @contextlib.contextmanager
    def _batch(self, durable: bool) -> Iterator[Batch]:
        self.batches.append(durable)
        with super()._batch(durable) as batch:
            yield batch


def message(text: str) -> dict[str, Any]:
    return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


async def test_calls_that_can_wait_run_off_the_event_loop_thread(tmp_path: Path) -> None:
    """Opening the connections (file I/O, WAL set-up) and fsync'd commits never run on the
    loop's thread."""
    path = str(tmp_path / "s.db")
    store = WatchedStore(path)
    lease = await store.acquire_lease("s1", create=True)  # opens the write connection
    opened = set(store.threads)
    store.threads.clear()
    await store.append("s1", 0, [("tool_intent", {"call_id": "c"})], durable=True, lease=lease)
    fsynced = set(store.threads)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the next write waits on the writer thread ...
    write = asyncio.create_task(store.append("s1", 1, [("message", message("m"))], lease=lease))
    await asyncio.sleep(0.02)
    store.threads.clear()
    record = await store.load("s1")  # ... so this read opens the read connection on its own
    read = set(store.threads)
    other.execute("COMMIT")
    other.close()
    await write
    assert record is not None
    assert store._reader is not None
    for threads in (opened, fsynced, read):
        assert threads
        assert threading.get_ident() not in threads
    await store.close()


async def test_a_short_lived_store_reads_on_its_write_connection(tmp_path: Path) -> None:
    """Before the read connection is open, an inline read borrows the write connection:
    a store object used for a few calls never starts its reader thread."""
    path = str(tmp_path / "s.db")
    first = SQLiteStore(path)
    await first.create("s1")
    await first.close()
    store = WatchedStore(path)
    await store.acquire_lease("s1")
    store.threads.clear()
    record = await store.load("s1")
    assert record is not None
    assert store.threads == {threading.get_ident()}
    assert store._reader is None
    await store.close()


async def test_a_lone_call_that_cannot_wait_runs_inline(tmp_path: Path) -> None:
    """Connections open, nothing handed over, locks free, not fsync'd: the call runs where
    it is awaited (no thread hop), in a group commit of its own."""
    store = WatchedStore(str(tmp_path / "s.db"))
    lease = await store.acquire_lease("s1", create=True)
    assert await store.load("s1") is not None
    store.threads.clear()
    store.batches.clear()
    await asyncio.sleep(0)  # each call in a loop turn of its own: the inline budget is fresh
    await store.append("s1", 0, [("message", message("hi"))], lease=lease)
    await asyncio.sleep(0)
    record = await store.load("s1")
    await asyncio.sleep(0)
    await store.audit.append_many([AuditEvent("note", {"n": 1}, "s1")])
    assert record is not None
    assert len(record.entries) == 1
    assert store.threads == {threading.get_ident()}
    assert store.batches == [False, False]
    await store.close()


async def test_a_burst_in_one_loop_turn_goes_to_the_threads_past_the_inline_budget(
    tmp_path: Path,
) -> None:
    """Inline calls may take INLINE_BUDGET_S of a loop turn; the rest of a burst goes to
    the writer thread, where it shares group commits."""
    store = WatchedStore(str(tmp_path / "s.db"))
    sessions = [f"s{i}" for i in range(200)]
    leases = [await store.acquire_lease(sid, create=True) for sid in sessions]
    await asyncio.sleep(0)
    store.batches.clear()
    store.threads.clear()
    await asyncio.gather(
        *(
            store.append(sid, 0, [("message", message(sid))], lease=lease)
            for sid, lease in zip(sessions, leases, strict=True)
        )
    )
    assert threading.get_ident() in store.threads  # the first calls ran inline
    assert len(store.threads) > 1  # the rest on the writer thread
    assert len(store.batches) < len(sessions) / 2  # most shared group commits
    await store.close()


async def test_concurrent_appends_of_many_sessions_share_commits(tmp_path: Path) -> None:
    store = WatchedStore(str(tmp_path / "s.db"))
    sessions = [f"s{i}" for i in range(40)]
    leases = [await store.acquire_lease(sid, create=True) for sid in sessions]
    store.batches.clear()
    await asyncio.gather(
        *(
            store.append(sid, 0, [("message", message(sid))], lease=lease)
            for sid, lease in zip(sessions, leases, strict=True)
        )
    )
    assert 1 <= len(store.batches) < len(sessions)
    for sid in sessions:
        record = await store.load(sid)
        assert record is not None
        assert [e.data for e in record.entries] == [message(sid)]
    await store.close()


async def test_a_durable_append_makes_its_group_commit_fsync(tmp_path: Path) -> None:
    store = WatchedStore(str(tmp_path / "s.db"))
    lease = await store.acquire_lease("s1", create=True)
    store.batches.clear()
    await store.append("s1", 0, [("tool_intent", {"call_id": "c", "name": "t"})], durable=True)
    await store.append("s1", 1, [("message", message("after"))], lease=lease)
    assert store.batches == [True, False]
    await store.close()


@pytest.mark.parametrize("failing", [0, 1, 2])
async def test_a_failing_call_rolls_back_alone_in_its_group_commit(
    tmp_path: Path, failing: int
) -> None:
    """First, middle or last call of a group commit fails: the others are committed.
    (The first runs without a savepoint: its failure rolls back and begins again.)"""
    path = str(tmp_path / "s.db")
    store = WatchedStore(path)
    for sid in ("a", "b", "c", "first"):
        await store.create(sid)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the writer thread waits on its first group commit
    first = asyncio.create_task(store.append("first", 0, [("message", message("1"))]))
    await asyncio.sleep(0.05)
    store.batches.clear()
    order = ["a", "c"]
    order.insert(failing, "b")
    calls = asyncio.gather(
        *(store.append(sid, 7 if sid == "b" else 0, [("message", message(sid))]) for sid in order),
        return_exceptions=True,
    )
    await asyncio.sleep(0.05)  # all three queued behind the waiting commit
    other.execute("COMMIT")
    other.close()
    await first
    results = await calls
    assert store.batches == [False]  # a, b and c: one group commit
    wrong = results[failing]
    assert isinstance(wrong, SessionConflict)
    assert "session 'b' is at version 0, not 7" in str(wrong)
    for sid, count in (("a", 1), ("b", 0), ("c", 1), ("first", 1)):
        record = await store.load(sid)
        assert record is not None
        assert len(record.entries) == count, sid
    await store.close()


async def test_the_loop_runs_while_a_write_waits_for_another_connections_lock(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteStore(path, busy_timeout=5.0)
    await store.create("s1")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the write lock until released below
    ticked = asyncio.Event()

    async def ticker() -> None:
        for _ in range(5):
            await asyncio.sleep(0.005)
        ticked.set()

    ticking = asyncio.create_task(ticker())
    append = asyncio.create_task(store.append("s1", 0, [("message", message("x"))]))
    await ticked.wait()  # before: the append held the loop until the lock was free
    assert not append.done()
    other.execute("COMMIT")
    other.close()
    written = await append
    await ticking
    assert [e.seq for e in written] == [1]
    await store.close()


async def test_a_closed_store_can_be_used_again(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    await store.create("s1")
    await store.close()
    assert await store.load("s1") is not None
    await store.close()


def test_calls_from_successive_event_loops_work(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    asyncio.run(store.create("s1"))
    record = asyncio.run(store.load("s1"))
    assert record is not None
    assert record.session_id == "s1"
    asyncio.run(store.close())


async def test_a_read_only_store_refuses_writes_and_names_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    writer = SQLiteStore(path)
    await writer.create("s1")
    await writer.close()
    reader = SQLiteStore(path, read_only=True)
    assert await reader.load("s1") is not None
    with pytest.raises(Exception, match=r"opened read-only: nothing can be written"):
        await reader.append("s1", 0, [("message", message("x"))])
    await reader.close()


async def test_a_group_commit_wakes_its_callers_a_few_per_loop_turn(tmp_path: Path) -> None:
    """Hundreds of calls finished by one group commit do not all resume in one loop turn
    (that turn would stall every other coroutine): at most RELEASE_PER_TURN per turn."""
    path = str(tmp_path / "s.db")
    store = WatchedStore(path)
    sessions = [f"s{i}" for i in range(120)]
    for sid in sessions:
        await store.create(sid)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # the writer waits: every append below queues up
    turn = 0
    woken: list[int] = []

    async def count_turns() -> None:
        nonlocal turn
        while True:
            turn += 1
            await asyncio.sleep(0)

    async def write(sid: str) -> None:
        await store.append(sid, 0, [("message", message(sid))])
        woken.append(turn)

    counter = asyncio.create_task(count_turns())
    writes = [asyncio.create_task(write(sid)) for sid in sessions]
    await asyncio.sleep(0.05)
    store.batches.clear()
    other.execute("COMMIT")
    other.close()
    await asyncio.gather(*writes)
    counter.cancel()
    assert len(store.batches) <= 2  # the first waiting call, then the rest together
    per_turn = max(woken.count(t) for t in set(woken))
    assert per_turn <= 16 == RELEASE_PER_TURN, per_turn
    await store.close()


async def test_a_journal_append_cancelled_in_flight_still_counts(tmp_path: Path) -> None:
    """The caller is cancelled while its append waits on the writer thread: the write
    commits anyway (handed over, it cannot be taken back), the journal learns its version,
    and the session's next append does not conflict."""
    path = str(tmp_path / "c.db")
    store = SQLiteStore(path)
    agent = Agent(model=ScriptedModel(["x"]), store=store, session_id="c")
    journal = await open_session(agent)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # holds the append on the writer thread
    write = asyncio.create_task(journal.append("status", {"status": "running"}))
    await asyncio.sleep(0.05)
    write.cancel()
    await asyncio.sleep(0.01)
    other.execute("COMMIT")
    other.close()
    await assert_cancelled_write_counted(agent, journal, write)


def test_store_objects_opening_one_new_file_at_once_all_work(tmp_path: Path) -> None:
    """Switching a new file to WAL needs an exclusive lock, and SQLite answers "locked"
    at once while another connection opens it: every opener waits its turn instead."""
    for attempt in range(12):
        path = str(tmp_path / f"new{attempt}.db")
        errors: list[BaseException] = []
        start = threading.Barrier(6)

        def open_and_write(
            n: int,
            path: str = path,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            store = SQLiteStore(path)
            start.wait()
            try:
                asyncio.run(store.create(f"s{n}"))
            except BaseException as exc:
                errors.append(exc)
            finally:
                asyncio.run(store.close())

        threads = [threading.Thread(target=open_and_write, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        check = SQLiteStore(path)
        assert len(asyncio.run(check.list_sessions())) == 6
        asyncio.run(check.close())


async def test_the_writer_thread_checkpoints_the_wal_not_the_commits(tmp_path: Path) -> None:
    """The write connection never checkpoints at COMMIT (that could run on the loop); the
    writer thread does every CHECKPOINT_EVERY commits, so the WAL does not keep growing."""
    path = str(tmp_path / "c.db")
    store = SQLiteStore(path)
    await store.create("a")
    for version in range(300):
        await store.append("a", version, [("message", message("x" * 200))])
        await asyncio.sleep(0)
    threads = store.store_threads()
    await threads.drain()  # a checkpoint handed to the writer has run
    assert store._conn is not None
    assert store._conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    assert threads.commits >= 300
    assert threads.checkpoints >= 1
    await store.close()


async def test_a_checkpoint_leaves_the_write_connection_free(tmp_path: Path) -> None:
    """A checkpoint copies pages for many ms: it runs on a connection of its own, so a
    write (an inline one on the loop, too) never waits behind it for the write lock."""
    store = SQLiteStore(tmp_path / "k.db")
    await store.create("a")
    for version in range(20):
        await store.append("a", version, [("message", message("x" * 200))])
    done = threading.Event()

    def checkpoint() -> None:
        store.checkpoint()
        done.set()

    with store._lock:  # a write in progress holds the write connection
        worker = threading.Thread(target=checkpoint)
        worker.start()
        assert done.wait(5.0), "the checkpoint waited for the write connection"
    worker.join()
    await store.append("a", 20, [("message", message("after"))])
    await store.close()
    reopened = SQLiteStore(tmp_path / "k.db")
    record = await reopened.load("a")
    assert record is not None
    assert record.version == 21
    await reopened.close()
