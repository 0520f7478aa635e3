"""Driving a coroutine to its result from sync code (``agent.run``, ``agent.resume``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_thread_state = threading.local()


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Drive ``coroutine`` to its result from sync code (inside a running loop: on a thread).

    The loop check happens outside any ``except`` block, so an error from the run
    carries no chained "no running event loop" context.
    """
    if _running_loop() is None:
        runner: asyncio.Runner | None = getattr(_thread_state, "runner", None)
        if runner is None:
            runner = _thread_state.runner = asyncio.Runner()
        return runner.run(coroutine)
    with ThreadPoolExecutor(1, thread_name_prefix="tether-sync") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
