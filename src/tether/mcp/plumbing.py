"""Small pieces of the MCP connection: a watched read stream, the loop thread, messages."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from tether.errors import TetherError


class WatchedStream:
    """Wraps the session's read stream; calls ``on_close`` when the server hangs up."""

    def __init__(self, inner: Any, on_close: Callable[[], None]) -> None:
        self._inner = inner
        self._on_close = on_close

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_close()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self._inner.__aexit__(*exc)  # type: ignore[no-any-return]


def serve_forever(loop: asyncio.AbstractEventLoop) -> None:
    """The body of a connection thread: run ``loop`` until stopped, then close it."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def describe(exc: BaseException) -> str:
    """A short ``Type: message`` for an error message (the one error inside a group)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]  # anyio task groups wrap the one error that matters
    text = str(exc).strip() or type(exc).__name__
    if len(text) > 300:
        text = text[:297] + "..."
    # tether's own errors already say what went wrong; others are named by their type
    return text if isinstance(exc, TetherError) else f"{type(exc).__name__}: {text}"


def printable(value: Any) -> str:
    """``value`` as text with control characters escaped (server text may reach a terminal)."""
    text = value if isinstance(value, str) else repr(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)
