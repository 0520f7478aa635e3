"""Ending a provider SDK's event stream so that none of its generators is left suspended."""

from __future__ import annotations

from typing import Any, Final

DRAIN_LIMIT: Final = 10_000
"""Events read at most after close: only what the SDK had already buffered can come."""


async def finish_stream(stream: Any) -> None:
    """Close ``stream`` (an SDK ``AsyncStream``), then run its generators to their end.

    ``AsyncStream.close()`` closes the HTTP response only: when the consumer stopped early
    (a chunk of the wrong shape, a cancel), the SDK's own async generators stay suspended
    until the garbage collector finds them, which may be after the event loop has closed
    (an "Event loop is closed" error raised at no one). Asking for the next event on the
    closed response ends them here, on the running loop; whatever that raises is expected.
    """
    await stream.close()
    for _ in range(DRAIN_LIMIT):
        try:
            await stream.__anext__()
        except (StopAsyncIteration, Exception):
            return
