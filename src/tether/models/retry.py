"""Retry settings, the backoff formula and the stale-stream watchdog."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass

from tether.errors import ConfigurationError, TetherError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a provider adapter retries.

    ``max_attempts`` bounds the attempts of one model call (first try included);
    delays follow ``min(base_delay * 2**(n-1), max_delay)`` plus up to 50% jitter,
    or the server's Retry-After when it sent one (up to ``max_retry_after``; a
    longer wait aborts). A stream silent for ``stale_timeout`` seconds is cut.
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    stale_timeout: float = 90.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigurationError(
                f"RetryPolicy.max_attempts must be >= 1, got {self.max_attempts}"
            )
        for name in ("base_delay", "max_delay", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"RetryPolicy.{name} must be >= 0")
        if self.stale_timeout <= 0:
            raise ConfigurationError(
                f"RetryPolicy.stale_timeout must be > 0 seconds, got {self.stale_timeout}"
            )

    def backoff(
        self, attempt: int, uniform: Callable[[float, float], float] = random.uniform
    ) -> float:
        """The delay after failed attempt number ``attempt`` (from 1)."""
        delay = min(self.base_delay * 2 ** (attempt - 1), self.max_delay)
        return float(delay + uniform(0, 0.5 * delay))


class StaleStreamError(TetherError):
    """The provider sent nothing for longer than the stale timeout."""


class Watchdog:
    """Cancels the current task when an awaited read stays silent past ``timeout``.

    Only time spent waiting for the provider counts (``waiting`` is set around
    each read), never time the consumer spends with an event.
    """

    __slots__ = ("_handle", "_task", "fired", "last", "loop", "timeout", "waiting")

    def __init__(self, timeout: float) -> None:
        self.loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self.timeout = timeout
        self.last = self.loop.time()
        self.waiting = False
        self.fired = False
        self._handle = self.loop.call_at(self.last + timeout, self._check)

    def _check(self) -> None:
        now = self.loop.time()
        if not self.waiting:
            self._handle = self.loop.call_at(now + self.timeout, self._check)
            return
        deadline = self.last + self.timeout
        if now >= deadline:
            self.fired = True
            self._task.cancel()
        else:
            self._handle = self.loop.call_at(deadline, self._check)

    def swallow(self) -> bool:
        """After a CancelledError: True if the watchdog caused it (and it is undone)."""
        return self.fired and self._task.uncancel() == 0

    def stop(self) -> None:
        self._handle.cancel()
