"""The MCP connection's own event loop, on a daemon thread: callers in any loop or thread
submit coroutines to it and wait for them (see :mod:`tether.mcp.connection` for why)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar

from tether.mcp.errors import MCPConnectionError, MCPToolError
from tether.mcp.plumbing import serve_forever

T = TypeVar("T")

TEARDOWN_TIMEOUT: Final = 10.0
"""Seconds a session gets to close, and the thread to stop, when the connection closes."""


class PrivateLoop:
    """Started on first use, stopped by :meth:`stop`, started again by the next use."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def ensure(self) -> asyncio.AbstractEventLoop:
        """The running private loop (started now if it is not)."""
        with self._lock:
            if self._loop is not None:
                return self._loop
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=serve_forever, args=(loop,), name=f"tether-mcp-{self.label}", daemon=True
            )
            thread.start()
            self._loop, self._thread = loop, thread
            return loop

    def run_sync(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coroutine`` in the private loop and wait for it (blocking)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.ensure())
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPConnectionError(
                f"MCP server {self.label!r} did not answer within {timeout:g} s"
            ) from None

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` in the private loop; cancelling this await cancels it there."""
        loop = self.ensure()
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # our caller was cancelled
            raise MCPToolError(
                f"MCP server {self.label!r} was closed while the call was running"
            ) from None

    def stop(self, shutdown: Callable[[], Coroutine[Any, Any, None]]) -> bool:
        """Run ``shutdown()`` in the loop (bounded), then stop the loop and its thread;
        False if it was not running. Refused from the loop's own thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return False
        if thread is threading.current_thread():
            raise MCPConnectionError(
                "MCPServer.close() cannot be called from its own connection thread"
            )
        future = asyncio.run_coroutine_threadsafe(shutdown(), loop)
        with contextlib.suppress(Exception):
            future.result(TEARDOWN_TIMEOUT + 5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TEARDOWN_TIMEOUT)
        return True


async def under(parent: Any, coroutine: Coroutine[Any, Any, T]) -> T:
    """Await ``coroutine`` with the OpenTelemetry context ``parent`` attached."""
    from opentelemetry import context as otel_context

    token = otel_context.attach(parent)
    try:
        return await coroutine
    finally:
        otel_context.detach(token)
