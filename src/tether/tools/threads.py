"""ToolThreads: the small reusable worker pool that runs sync tools off the event loop.

``loop.run_in_executor`` goes through concurrent.futures (a work item, a
concurrent Future, thread-count bookkeeping, then ``wrap_future`` chaining two
futures across threads). Here a call is one queue put; the worker settles the
caller's asyncio future directly with ``loop.call_soon_threadsafe``. The loop
never waits on a worker: it only awaits the future.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from tether.errors import ConfigurationError

# A job: the call, then how to hand its outcome back (called on the worker thread).
_Job = tuple[Callable[[], Any], Callable[[Any, BaseException | None], None]]
_STOP = None

_live: weakref.WeakSet[ToolThreads] = weakref.WeakSet()


class ToolThreads(Executor):
    """At most ``max_workers`` threads, started on demand and kept for reuse.

    ``start(loop, call)`` returns an asyncio future settled from the worker; a call
    whose future was cancelled before a worker took it does not run. Also a plain
    :class:`concurrent.futures.Executor` (``submit``) for code that wants one.
    """

    def __init__(self, max_workers: int, thread_name_prefix: str = "tether-tool") -> None:
        if max_workers < 1:
            raise ConfigurationError(
                f"ToolThreads: max_workers must be at least 1, got {max_workers}"
            )
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False
        _live.add(self)

    def start(
        self, loop: asyncio.AbstractEventLoop, call: Callable[[], Any]
    ) -> asyncio.Future[Any]:
        """Run ``call`` on a worker; the returned future (of ``loop``) gets its outcome."""
        future: asyncio.Future[Any] = loop.create_future()

        def settle(value: Any, error: BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, value, error)

        self._put((_unless_cancelled(future, call), settle))
        return future

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        result: Future[Any] = Future()

        def run() -> Any:
            if not result.set_running_or_notify_cancel():
                return _SKIPPED
            return fn(*args, **kwargs)

        self._put((run, functools.partial(_settle, result)))
        return result

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    job = self._jobs.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[1](_SKIPPED, None)
        for _ in threads:
            self._jobs.put(_STOP)
        if wait:
            for thread in threads:
                thread.join()

    def _put(self, job: _Job) -> None:
        with self._lock:
            if self._closed:
                raise ConfigurationError(
                    "cannot run a sync tool: this ToolThreads pool was shut down "
                    "(agent.close() does that; take agent.executor again for a new pool)"
                )
            if self._idle > 0:
                self._idle -= 1
            elif len(self._threads) < self._max:
                thread = threading.Thread(
                    target=self._work, name=f"{self._prefix}_{len(self._threads)}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
            # else: every worker is busy; the job waits in the queue for the next free one
        self._jobs.put(job)

    def _work(self) -> None:
        jobs = self._jobs
        while True:
            job = jobs.get()
            if job is None:
                return
            call, settle = job
            try:
                value, error = call(), None
            except BaseException as exc:
                value, error = None, exc
            with self._lock:  # idle before the caller hears back, so its next call reuses us
                self._idle += 1
            settle(value, error)
            del job, call, settle, value, error


_SKIPPED: Any = object()  # the caller gave up before a worker took the job


def _unless_cancelled(future: asyncio.Future[Any], call: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        if future.cancelled():  # read across threads: at worst the call still runs
            return _SKIPPED
        return call()

    return run


def _settle(
    future: asyncio.Future[Any] | Future[Any], value: Any, error: BaseException | None
) -> None:
    """Give ``future`` (of a loop, or of ``submit``) the call's outcome; a call skipped
    because it was cancelled before it ran cancels it; one already done is left alone."""
    if future.done():
        return
    if value is _SKIPPED:
        future.cancel()
    elif error is None:
        future.set_result(value)
    else:
        future.set_exception(error)


def _at_exit() -> None:
    # Like concurrent.futures: let running tools finish instead of killing them mid-way.
    for pool in list(_live):
        pool.shutdown(wait=True)


getattr(threading, "_register_atexit", lambda fn: None)(_at_exit)


class ToolPool:
    """An agent's sync-tool threads: a :class:`ToolThreads` made on first use, released by
    :meth:`release` (``agent.close()``) and made again when a tool next needs one."""

    __slots__ = ("_pool", "max_workers")

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers
        self._pool: ToolThreads | None = None

    def get(self) -> ToolThreads:
        pool = self._pool
        if pool is None:
            pool = self._pool = ToolThreads(self.max_workers)
        return pool

    def release(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
