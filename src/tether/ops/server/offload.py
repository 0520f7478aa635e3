"""The one place where the server calls its store: off the event loop when the store blocks.

A store whose coroutines do their I/O on the calling thread would stall every request
while one slow query (or a lock held by another process) runs. Such a store declares
``blocks_loop = True`` and its calls run in a small pool of threads, each with its own
event loop. The built-in stores all really await (SQLite hands its calls to its own
threads, PostgreSQL and memory await) and are awaited on the server's loop as they are.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, ParamSpec, TypeVar

if TYPE_CHECKING:
    from tether.durable import Store

P = ParamSpec("P")
T = TypeVar("T")
STORE_THREADS: Final = 4
"""Threads for a blocking store: reads go on while a write waits for a lock."""


class StoreRunner:
    """``await run(fn, *args)`` runs ``fn(*args)`` (a coroutine function of ``store``)
    on a store thread when the store blocks the calling thread, else on this loop."""

    def __init__(self, store: Store, *, threads: int = STORE_THREADS) -> None:
        self.store = store
        self.blocking = bool(getattr(store, "blocks_loop", False))
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._loops: list[asyncio.AbstractEventLoop] = []
        self._local = threading.local()
        self._guard = threading.Lock()

    async def __call__(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        if not self.blocking:
            return await fn(*args, **kwargs)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="tether-store")
        future = self._pool.submit(self._run, fn, args, kwargs)
        return await asyncio.wrap_future(future)

    def _run(self, fn: Callable[..., Awaitable[T]], args: Any, kwargs: Any) -> T:
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None:
            loop = self._local.loop = asyncio.new_event_loop()
            with self._guard:
                self._loops.append(loop)
        return loop.run_until_complete(fn(*args, **kwargs))

    def close(self) -> None:
        """Wait for running calls, then stop the threads (the store is closed by its owner)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        with self._guard:
            for loop in self._loops:
                loop.close()
            self._loops.clear()
