"""The live event channel: stream events that running tools emit, on their way to the stream.

A tool batch group whose tools may emit (they declare a ``ToolContext`` parameter)
runs its calls as tasks and waits on one :class:`ToolChannel`; each call gets an
:class:`Outlet` (``ToolContext.progress`` / ``ToolContext.emit`` write through it). A
group whose tools take no context never builds one, so plain calls pay nothing.

Bounded: at most :data:`CHANNEL_SIZE` events wait in the queue. When it is full,
``emit`` (async) waits for room, which pauses the emitting tool (a sub-agent's stream
is driven by that await, so the child waits for its parent's consumer); ``progress``
(any thread, never blocks) keeps only each call's latest report aside, delivered when
the queue drains: progress is a level, so the reports in between are dropped (counted
in :attr:`ToolChannel.dropped`). Closing an outlet (its call ended) refuses its later
events, so nothing of a call is yielded after its ``ToolFinished``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from typing import TYPE_CHECKING, Any

from tether.events import ToolProgress

if TYPE_CHECKING:
    from tether.events import StreamEvent
    from tether.messages import ToolCall

CHANNEL_SIZE = 256
"""Events that may wait in one channel before emitters wait (or progress is coalesced)."""


class Outlet:
    """One running call's way into the channel (closed when the call ends)."""

    __slots__ = ("call_id", "channel", "closed", "tool")

    def __init__(self, channel: ToolChannel, call: ToolCall) -> None:
        self.channel = channel
        self.tool = call.name
        self.call_id = call.id
        self.closed = False


class ToolChannel:
    """A bounded queue of emitted events and the wake-up of the batch that yields them.

    Producers: :meth:`progress` from any thread, :meth:`emit` on the channel's loop.
    The consumer (toolcalls.py) loops on :meth:`wait`, :meth:`drain` and :meth:`close`.
    """

    __slots__ = (
        "_held",
        "_lock",
        "_loop",
        "_queue",
        "_ready",
        "_room",
        "_scheduled",
        "_thread",
        "_waiter",
        "dropped",
        "loop",
        "size",
    )

    def __init__(self, size: int | None = None) -> None:
        self._loop = self.loop = asyncio.get_running_loop()
        """The loop of the batch that yields the events (where :meth:`emit` is awaited)."""
        self._thread = threading.get_ident()
        self._lock = threading.Lock()
        self._queue: deque[StreamEvent] = deque()
        self._held: dict[Outlet, ToolProgress] = {}  # latest report that found the queue full
        self._room: list[asyncio.Future[None]] = []  # emit() calls waiting for room
        self._waiter: asyncio.Future[None] | None = None
        self._ready = False  # something happened since the consumer last looked
        self._scheduled = False  # a wake-up from another thread is on its way
        self.size = CHANNEL_SIZE if size is None else size
        self.dropped = 0
        """Progress reports replaced by a later one of the same call while the queue was full."""

    def outlet(self, call: ToolCall) -> Outlet:
        return Outlet(self, call)

    # -- producers ---------------------------------------------------------------------

    def progress(self, outlet: Outlet, event: ToolProgress) -> bool:
        """Queue ``event`` (any thread, never blocks); False when its call has ended."""
        with self._lock:
            if outlet.closed:
                return False
            if len(self._queue) < self.size:
                self._queue.append(event)
            else:  # the consumer is already woken: a full queue is not empty
                if outlet in self._held:
                    self.dropped += 1
                self._held[outlet] = event
                return True
        self._wake()
        return True

    def offer(self, outlet: Outlet, event: StreamEvent) -> bool | None:
        """Queue ``event`` if there is room (on the loop): True; False when its call has
        ended; None when the queue is full (then :meth:`emit` waits)."""
        with self._lock:
            if outlet.closed:
                return False
            if len(self._queue) >= self.size:
                return None
            self._queue.append(event)
        self._signal()
        return True

    async def emit(self, outlet: Outlet, event: StreamEvent) -> bool:
        """Queue ``event``, waiting while the queue is full; False when its call has ended."""
        while True:
            queued = self.offer(outlet, event)
            if queued is not None:
                return queued
            room = self._loop.create_future()
            self._room.append(room)
            await room

    def _wake(self) -> None:
        if threading.get_ident() == self._thread:
            self._signal()
            return
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to read it
            self._loop.call_soon_threadsafe(self._signal)

    def _signal(self, _: object = None) -> None:
        """On the loop: wake the consumer (also a done-callback of the calls' tasks)."""
        self._scheduled = False
        self._ready = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- the consumer ------------------------------------------------------------------

    def watch(self, task: asyncio.Future[Any]) -> None:
        """Wake the consumer when ``task`` (a call of the group) is done (also when it
        was cancelled before it started, so it could not call :meth:`ended`)."""
        task.add_done_callback(self._signal)

    def ended(self) -> None:
        """Called by a call's task as it ends: wakes the consumer without waiting for the
        task's done-callbacks, a loop turn later (the task is done when the consumer runs)."""
        self._signal()

    async def wait(self) -> None:
        """Until an event is queued or a watched task is done (at once if one already is)."""
        with self._lock:
            if self._ready or self._queue or self._held:
                self._ready = False
                return
            waiter = self._waiter = self._loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None
            self._ready = False

    def drain(self) -> list[StreamEvent]:
        """Every queued event, oldest first (held progress last: it came after them)."""
        if not (self._queue or self._held or self._room):
            return []  # (an event queued by a thread just now is found by the next drain)
        with self._lock:
            items = list(self._queue)
            self._queue.clear()
            if self._held:
                items.extend(self._held.values())
                self._held.clear()
            room, self._room = self._room, []
        for future in room:
            if not future.done():
                future.set_result(None)
        return items

    def close(self, outlet: Outlet) -> list[StreamEvent]:
        """End ``outlet``'s call: refuse its later events; return what is queued (of every
        call) so the caller yields it before the call's result."""
        with self._lock:
            outlet.closed = True
        return self.drain()

    def shut(self, outlets: list[Outlet]) -> None:
        """The group is over: close every outlet, drop what is queued, release waiters."""
        with self._lock:
            for outlet in outlets:
                outlet.closed = True
        self.drain()
