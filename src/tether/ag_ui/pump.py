"""A run's tether events pumped by a task of their own, so that a client that goes away
does not cut the run short.

The response reads the events from a bounded queue (a slow client slows the run down, as
reading the stream directly would). When the response stops reading (the client closed
the connection), the run is asked to cancel (``agent.cancel()``: cooperative, at the next
check) and driven to its end unread, so its journal ends as any cancelled run's does
(every call answered) instead of a run cut off mid-step; the agent is closed after that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Final

from tether.ag_ui.logs import logged
from tether.events import StreamEvent

log = logging.getLogger("tether.server")


DEPTH: Final = 64
"""Events queued ahead of a slow client before the run waits for it."""


class Raised:
    """The run's stream raised ``error`` (delivered in order, after its last event)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class Pump:
    """``await pump.next()``: the run's next event, a :class:`Raised`, or None at its end."""

    def __init__(
        self,
        events: AsyncGenerator[StreamEvent, None],
        cancel: Callable[[], None],
        done: Callable[[], Awaitable[None]],
    ) -> None:
        self._events = events
        self._cancel = cancel
        self._done = done
        self._queue: asyncio.Queue[StreamEvent | Raised | None] = asyncio.Queue(DEPTH)
        self._detached = False
        self._task = asyncio.ensure_future(self._run())

    async def next(self) -> StreamEvent | Raised | None:
        return await self._queue.get()

    def detach(self) -> None:
        """Nobody reads any more: cancel the run and let it end unread."""
        if self._detached or self._task.done():
            return
        self._detached = True
        self._cancel()
        while not self._queue.empty():  # a run waiting for room goes on
            self._queue.get_nowait()

    async def _run(self) -> None:
        last: Raised | None = None
        try:
            async with contextlib.aclosing(self._events) as stream:
                async for event in stream:
                    if not self._detached:
                        await self._queue.put(event)
        except Exception as exc:
            if self._detached:
                log.warning("a run its client left failed: %s", logged(exc))
            last = Raised(exc)
        finally:
            try:
                await self._done()
            except Exception as exc:  # closing the agent: log, the run is over anyway
                log.error("closing a run's agent failed: %s", logged(exc))
        if not self._detached:
            await self._queue.put(last)
