"""The loop side of an SQLite store's threads: settling the futures of finished calls on
the caller's loop, at most ``RELEASE_PER_TURN`` per loop turn (see
:mod:`tether.durable.sqlite.threads`), and the inline budget spent in this turn."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Iterable
from typing import Any, Protocol

RELEASE_PER_TURN = 16


class Settled(Protocol):
    """A finished call: the future its caller awaits, and its outcome."""

    future: asyncio.Future[Any] | None
    value: Any
    error: BaseException | None


class Releaser:
    """Settles the futures of finished calls on one loop, ``RELEASE_PER_TURN`` per turn."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._ready: collections.deque[Settled] = collections.deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self.spent = 0.0
        """Seconds of inline store calls in this loop turn (reset at the next turn)."""

    def spend(self, seconds: float) -> None:
        if self.spent == 0.0:
            self.loop.call_soon(self._new_turn)
        self.spent += seconds or 1e-9

    def _new_turn(self) -> None:
        self.spent = 0.0

    def post(self, jobs: Iterable[Settled]) -> None:
        """From a store thread: queue ``jobs`` and make sure the loop drains the queue."""
        with self._lock:
            self._ready.extend(jobs)
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # the caller's loop is gone
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        ready = self._ready
        for _ in range(RELEASE_PER_TURN):
            try:
                job = ready.popleft()
            except IndexError:
                break
            future = job.future
            if future is None or future.done():  # its caller was cancelled
                continue
            if job.error is None:
                future.set_result(job.value)
            else:
                future.set_exception(job.error)
            job.value = job.error = None
        with self._lock:
            if not ready:
                self._scheduled = False
                return
        self.loop.call_soon(self._drain)  # the rest next turn, after timers and I/O
