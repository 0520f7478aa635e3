"""SQLiteStore's I/O threads: the event loop never waits on SQLite.

Every store call is a coroutine whose body is synchronous SQLite work (``@offloaded``).
A call that could wait is handed to one of the store's two threads and awaits a
future the thread settles through the caller's loop (a
:class:`~tether.durable.sqlite.loop_side.Releaser`):

- the writer thread runs write calls in *group commits*: it takes every call queued
  (up to ``MAX_BATCH``), opens one ``BEGIN IMMEDIATE``, runs each call after the first
  inside its own ``SAVEPOINT`` (a call that fails rolls back alone), then commits once
  (``FULL``, one fsync, if any call asked for ``durable``). No caller hears back
  before that commit: an acknowledged write is committed, as before. Concurrent
  appends of many sessions sharing the store thus share one transaction and one fsync.
- the reader thread runs reads on the read connection (WAL: they never wait for
  the writer).

A call that cannot wait runs inline instead (:meth:`StoreThreads.try_inline`): not
fsync'd, its connection open, nothing handed over to its thread, and the write lock
free at once - the write connection's ``busy_timeout`` is 0, so SQLite answers "busy"
instead of waiting, and only the writer thread waits for a lock. Inline work is capped
at ``INLINE_BUDGET_S`` per loop turn, so a burst of calls in one turn goes to the
writer and shares its group commits. The write connection never checkpoints at
``COMMIT``; the writer thread checkpoints every ``CHECKPOINT_EVERY`` commits.

A group commit finishes hundreds of calls at once. Settling all their futures in one
loop turn would run hundreds of task steps back to back (a stall of tens of ms for
every other coroutine); the loop settles at most ``RELEASE_PER_TURN`` of them per turn
instead, so timers and I/O get a turn in between.

A thread stops after ``IDLE_S`` seconds without work and starts again on demand, so
an abandoned store leaves no thread behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, Protocol, TypeVar, cast

from tether.durable.errors import StoreBusy, StoreError
from tether.durable.sqlite.loop_side import Releaser

if TYPE_CHECKING:
    import sqlite3

MAX_BATCH = 256
IDLE_S = 10.0
INLINE_BUDGET_S = 0.001
"""Inline store work allowed per store per loop turn (the rest goes to the threads)."""
CHECKPOINT_EVERY = 256
"""Commits between two WAL checkpoints, which the writer thread runs."""

P = ParamSpec("P")
T = TypeVar("T")
Kind = Literal["read", "write"]


class ThreadedStore(Protocol):
    """What the threads need of their store (``sqlite/connections.py`` has it)."""

    @property
    def one_connection(self) -> bool: ...  # reads use the write connection (:memory:)
    @property
    def reader_open(self) -> bool: ...
    def hold_at_once(self, write: bool) -> threading.RLock | None: ...

    def group_commit(self, durable: bool) -> AbstractContextManager[Batch]: ...
    def checkpoint(self) -> None: ...


class Offloadable(Protocol):
    """An object whose ``@offloaded`` methods run on a store's threads."""

    def store_threads(self) -> StoreThreads: ...


@dataclass
class Batch:
    """The group commit the writer thread is running (thread-local while it runs)."""

    store: ThreadedStore
    conn: sqlite3.Connection
    durable: bool
    savepoints: int = 0
    holds_work: bool = False
    """Whether a call's writes are in the open transaction (the next call needs a
    savepoint to roll back alone; the first needs none)."""
    broken: BaseException | None = None
    """Set when the transaction could not be begun again after a call rolled it back:
    the calls left fail with it."""
    lost: BaseException | None = None
    """Set when SQLite rolled back the whole transaction under calls that had succeeded:
    every call of the group commit fails with it."""


@dataclass
class _Job:
    coro: Coroutine[Any, Any, Any]
    future: asyncio.Future[Any] | None
    """None for a call run inline (nobody waits on it)."""
    releaser: Releaser | None
    durable: bool = False
    value: Any = None
    error: BaseException | None = None
    bare: bool = False
    """Run outside any transaction (``drain``'s marker, a checkpoint's wake-up)."""


_local = threading.local()


def current_batch(store: ThreadedStore) -> Batch | None:
    """The group commit of ``store`` this thread is running, if any."""
    batch: Batch | None = getattr(_local, "batch", None)
    return batch if batch is not None and batch.store is store else None


def _on_store_thread() -> bool:
    return bool(getattr(_local, "store_thread", False))


def reads_on_writer(store: ThreadedStore) -> bool:
    """Whether this thread runs an inline read of ``store`` on its write connection."""
    return getattr(_local, "lent", None) is store


def running_inline() -> bool:
    """Whether this thread runs a store call inline, on its event loop (it must not wait)."""
    return bool(getattr(_local, "inline", False))


def offloaded(
    kind: Kind, *, durable_kw: str | None = None
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """Run the decorated store coroutine (synchronous inside) where it is awaited when
    it cannot wait (:meth:`StoreThreads.try_inline`), else on the store's ``kind``
    thread; called from a store thread, it runs inline. ``durable_kw``: the keyword
    argument that asks for an fsync'd commit (always the writer thread)."""

    def wrap(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(fn)
        async def run(*args: P.args, **kwargs: P.kwargs) -> T:
            coro = fn(*args, **kwargs)
            if _on_store_thread():
                return await coro
            threads = cast(Offloadable, args[0]).store_threads()
            durable = bool(kwargs.get(durable_kw)) if durable_kw else False
            if not durable:
                ran, value = threads.try_inline(kind, coro)
                if ran:
                    return value  # type: ignore[no-any-return]
                coro = fn(*args, **kwargs)  # it would have waited: the thread runs it afresh
            return await threads.submit(kind, coro, durable)  # type: ignore[no-any-return]

        return run

    return wrap


class StoreThreads:
    """The writer and reader threads of one SQLiteStore."""

    def __init__(self, store: ThreadedStore) -> None:
        self._store = store
        self._lanes = {"write": _Lane(self, "write"), "read": _Lane(self, "read")}
        # an in-memory database has one connection: its reads go through the writer
        self._read_lane = "write" if store.one_connection else "read"
        self._releasers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Releaser] = (
            weakref.WeakKeyDictionary()
        )
        self.commits = 0
        """Group commits run so far (a test reads it to see that calls shared commits)."""
        self.checkpoints = 0
        """WAL checkpoints the writer thread ran (read by a test)."""

    def _loop_side(self) -> Releaser:
        loop = asyncio.get_running_loop()
        releaser = self._releasers.get(loop)
        if releaser is None:
            releaser = self._releasers[loop] = Releaser(loop)
        return releaser

    def _job(
        self, coro: Coroutine[Any, Any, Any], durable: bool = False
    ) -> tuple[_Job, asyncio.Future[Any]]:
        releaser = self._loop_side()
        future = releaser.loop.create_future()
        return _Job(coro, future, releaser, durable), future

    def try_inline(self, kind: Kind, coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
        """Run a call that cannot wait right here, on the caller's thread: (True, value).

        Only when nothing is handed over to the lane (order and group commits stay as
        they are), its connection is open and free, this loop turn has inline budget
        left, and a write gets the write lock at once. Anything else - a lock held by
        another connection, a connection to open - is (False, None): ``coro`` is closed
        and the call goes to the thread, which may wait. Reads take no lock in WAL mode.
        Raises what the call raised."""
        side = self._loop_side()
        if side.spent >= INLINE_BUDGET_S:
            coro.close()
            return False, None
        store = self._store
        # a read before the read connection is open borrows the write connection (a
        # short-lived store object then never starts its reader thread)
        borrow = kind == "read" and not store.reader_open
        write = kind == "write" or borrow or self._read_lane == "write"
        lane = self._lanes["write" if write else "read"]
        lock = None if lane.pending else store.hold_at_once(write)
        if lock is None:
            coro.close()
            return False, None
        started = time.perf_counter()
        was_store_thread = _on_store_thread()
        job = _Job(coro, None, None)
        try:
            _local.store_thread = _local.inline = True
            _local.lent = store if borrow else None
            if kind == "write":
                lane._group_commit([job])
            else:
                _drive(job)
        finally:
            _local.store_thread = was_store_thread
            _local.inline = False
            _local.lent = None
            lock.release()
            side.spend(time.perf_counter() - started)
        if isinstance(job.error, StoreBusy):  # it would have waited for a lock
            return False, None
        if job.error is not None:
            raise job.error
        if kind == "write":
            lane.count_inline_commit()
        return True, job.value

    def submit(
        self, kind: Kind, coro: Coroutine[Any, Any, Any], durable: bool
    ) -> asyncio.Future[Any]:
        job, future = self._job(coro, durable)
        self._lanes[kind if kind == "write" else self._read_lane].put(job)
        return future

    async def drain(self) -> None:
        """Return once every call handed over before this one is done."""
        waits = []
        for lane in {self._lanes["write"], self._lanes[self._read_lane]}:
            job, future = self._job(_nothing())
            job.bare = True
            lane.put(job)
            waits.append(future)
        await asyncio.gather(*waits)

    def stop(self) -> None:
        """Let the threads end once their queued calls are done (they restart on demand)."""
        for lane in self._lanes.values():
            lane.stop()


class _Lane:
    def __init__(self, owner: StoreThreads, kind: str) -> None:
        self._owner = owner
        self._kind = kind
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.pending = 0
        """Calls handed over and not yet answered (an inline call must not pass them)."""
        self._uncheckpointed = 0
        self._checkpoint_queued = False

    def put(self, job: _Job) -> None:
        with self._lock:
            self.pending += 1
            self._jobs.put(job)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._work, name=f"tether-sqlite-{self._kind}", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        with self._lock:
            if self._thread is not None:
                self._jobs.put(None)

    def _work(self) -> None:
        _local.store_thread = True
        while True:
            try:
                job = self._jobs.get(timeout=IDLE_S)
            except queue.Empty:
                job = None
            if job is None:
                with self._lock:
                    if self._jobs.empty():
                        self._thread = None
                        return
                continue
            jobs = [job]
            if self._kind == "write":
                while len(jobs) < MAX_BATCH:
                    try:
                        more = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        self._jobs.put(None)  # stop after this batch
                        break
                    jobs.append(more)
                calls = [one for one in jobs if not one.bare]
                if calls:
                    self._group_commit(calls)
                for one in jobs:
                    if one.bare:
                        _drive(one)
            else:
                for one in jobs:
                    _drive(one)
            with self._lock:  # done: a call awaited after these may run inline
                self.pending -= len(jobs)
            _release(jobs)
            if self._kind == "write" and self._uncheckpointed >= CHECKPOINT_EVERY:
                self._checkpoint()
            del job, jobs

    def count_inline_commit(self) -> None:
        """After a commit run inline: past ``CHECKPOINT_EVERY`` commits, wake this lane's
        thread to checkpoint (the connection does none itself: it would on the loop)."""
        if self._uncheckpointed >= CHECKPOINT_EVERY and not self._checkpoint_queued:
            self._checkpoint_queued = True
            job, _ = self._owner._job(_nothing())
            job.bare = True
            self.put(job)

    def _checkpoint(self) -> None:
        """Copy the WAL back into the database (PASSIVE: waits for nobody)."""
        self._uncheckpointed = 0
        self._checkpoint_queued = False
        with contextlib.suppress(Exception):  # retried next time
            self._owner._store.checkpoint()
            self._owner.checkpoints += 1

    def _group_commit(self, jobs: list[_Job]) -> None:
        store = self._owner._store
        try:
            with store.group_commit(any(j.durable for j in jobs)) as batch:
                _local.batch = batch
                try:
                    for job in jobs:
                        _drive(job)
                finally:
                    _local.batch = None
            self._owner.commits += 1
            self._uncheckpointed += 1
        except BaseException as exc:  # BEGIN or COMMIT failed: nothing of the batch is saved
            for job in jobs:
                job.coro.close()  # one never started must not warn
                if job.error is None:
                    job.value, job.error = None, exc


async def _nothing() -> None:
    return None


def _drive(job: _Job) -> None:
    """Run a store coroutine that never suspends (its body is synchronous SQLite work)."""
    try:
        job.coro.send(None)
    except StopIteration as stop:
        job.value = stop.value
        return
    except BaseException as exc:
        job.error = exc
        return
    job.coro.close()
    job.error = StoreError("internal: a SQLite store call waited on the event loop")


def _release(jobs: list[_Job]) -> None:
    """Hand finished calls back to their loops (from a store thread)."""
    by_loop: dict[Releaser, list[_Job]] = {}
    for job in jobs:
        if job.releaser is not None:
            by_loop.setdefault(job.releaser, []).append(job)
    for releaser, done in by_loop.items():
        releaser.post(done)
