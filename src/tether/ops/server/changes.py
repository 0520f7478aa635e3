"""The inbox change cursor behind ``GET /api/events``, computed once and shared.

One poller task runs while at least one long poll waits. Each tick it asks the store
for its cheap change marker (``store.change_marker()``, where the store has one: SQLite
answers from ``PRAGMA data_version`` without reading a table) and recomputes the cursor
(the pending approvals and the session list) only when the marker moved; a store
without a marker has the cursor recomputed every tick. Either way the work is per tick,
not per waiting client: the waiters sleep on one :class:`asyncio.Event` that the poller
sets when the cursor changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from tether.durable.errors import StoreError

if TYPE_CHECKING:
    from tether.ops.server.offload import StoreRunner

log = logging.getLogger("tether.server")
POLL_EVERY: Final = 0.5
CURSOR_ROWS: Final = 1000


class ChangeFeed:
    """The current cursor, and a way to wait until it differs from a client's."""

    def __init__(self, run: StoreRunner, *, every: float = POLL_EVERY) -> None:
        self._run = run
        self._every = every
        self._marker_fn: Callable[[], Awaitable[Any]] | None = getattr(
            run.store, "change_marker", None
        )
        self._marker: Any = None
        self._cursor: str | None = None
        self._at = 0.0
        self._computing: asyncio.Future[str] | None = None
        self._changed = asyncio.Event()
        self._waiters = 0
        self._poller: asyncio.Task[None] | None = None

    async def _compute(self) -> str:
        store = self._run.store
        pending = await self._run(store.approvals.pending, limit=CURSOR_ROWS)
        sessions = await self._run(store.list_sessions, limit=CURSOR_ROWS)
        text = json.dumps(
            [[a.id for a in pending], [[s.session_id, s.status, s.version] for s in sessions]]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:24]

    async def _refresh(self) -> str:
        """The cursor now: the marker says whether the last one is still true. Concurrent
        callers share one computation."""
        if self._computing is not None:
            return await asyncio.shield(self._computing)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._computing = future
        try:
            marker = None if self._marker_fn is None else await self._run(self._marker_fn)
            if self._cursor is None or marker is None or marker != self._marker:
                cursor = await self._compute()
                self._marker = marker
                if cursor != self._cursor:
                    self._cursor = cursor
                    self._changed.set()
                    self._changed = asyncio.Event()
            assert self._cursor is not None
            self._at = asyncio.get_running_loop().time()
            future.set_result(self._cursor)
            return self._cursor
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        finally:
            self._computing = None

    async def current(self) -> str:
        """The cursor now: checked at most one poll interval ago."""
        fresh = asyncio.get_running_loop().time() - self._at < self._every
        if self._cursor is not None and fresh:
            return self._cursor
        return await self._refresh()

    async def wait(
        self, since: str | None, seconds: float, gone: Callable[[], Awaitable[bool]]
    ) -> str:
        """The cursor once it differs from ``since``, or after ``seconds``, or
        when ``gone()`` (checked every few seconds) says the client left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        self._waiters += 1
        self._start()
        try:
            while True:
                changed = self._changed  # before any await: a change fires this one
                cursor = await self.current()
                if cursor != since or deadline <= loop.time() or await gone():
                    return cursor
                left = deadline - loop.time()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(left, 5.0))
        finally:
            self._waiters -= 1

    def _start(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll(), name="tether-inbox-poller")

    async def _poll(self) -> None:
        try:
            while self._waiters > 0:
                await asyncio.sleep(self._every)
                try:
                    await self._refresh()
                except StoreError as exc:
                    log.warning("inbox change poll failed: %s", exc)
        finally:
            self._poller = None

    async def close(self) -> None:
        """Stop the poller (server shutdown)."""
        poller = self._poller
        if poller is not None:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
