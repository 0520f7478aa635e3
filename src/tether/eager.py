"""Run a coroutine's first step at once, as Python 3.12's eager tasks do: a coroutine
that finishes without suspending (a store call that ran inline) then needs no task."""

from __future__ import annotations

from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def run_eagerly(coro: Coroutine[Any, Any, T]) -> tuple[bool, T | Resumed[T]]:
    """``(True, result)`` when ``coro`` finished in its first step, else ``(False, rest)``:
    an awaitable that continues it (give it to a task, or await it)."""
    try:
        pending = coro.send(None)
    except StopIteration as done:
        return True, done.value
    return False, Resumed(coro, pending)


class Resumed(Generic[T]):
    """The rest of a coroutine whose first step ran and yielded ``pending`` (what it
    waits on): awaiting this hands ``pending`` to the awaiting task and forwards every
    value and exception to the coroutine, as ``await coro`` would have."""

    __slots__ = ("_coro", "_pending")

    def __init__(self, coro: Coroutine[Any, Any, T], pending: Any) -> None:
        self._coro = coro
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, T]:
        coro, pending = self._coro, self._pending
        while True:
            try:
                sent = yield pending
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # thrown in by the task (a cancel): forward it
                try:
                    pending = coro.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    pending = coro.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
