"""run_eagerly: a coroutine that finishes in its first step needs no task; one that
suspends continues, with values, errors and cancels forwarded as ``await`` would."""

from __future__ import annotations

import asyncio

import pytest

from tether.eager import run_eagerly


async def _now() -> int:
    return 7


async def _later(ready: asyncio.Future[int]) -> int:
    return await ready + 1


async def _fails() -> None:
    raise ValueError("at once")


async def test_a_coroutine_that_does_not_suspend_finishes_at_once() -> None:
    finished, value = run_eagerly(_now())
    assert finished
    assert value == 7


async def test_an_error_in_the_first_step_is_raised_at_once() -> None:
    with pytest.raises(ValueError, match="at once"):
        run_eagerly(_fails())


async def test_a_suspended_coroutine_continues_in_a_task() -> None:
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    finished, rest = run_eagerly(_later(ready))
    assert not finished
    task = asyncio.ensure_future(rest)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    ready.set_result(41)
    assert await task == 42


async def test_a_cancel_reaches_the_suspended_coroutine() -> None:
    seen: list[str] = []
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def waits() -> int:
        try:
            return await ready
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    finished, rest = run_eagerly(waits())
    assert not finished
    task = asyncio.ensure_future(rest)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]
