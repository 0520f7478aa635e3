"""Run limits and a shareable iteration budget."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from tether.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-invocation ceilings, checked at cycle boundaries (None = no limit).

    ``turns`` counts model calls; ``wall_seconds`` is wall-clock time since the
    invocation started. Each limit that is hit stops the run with its own stop
    reason (``limit_turns``, ``limit_total_tokens``, ``limit_output_tokens``,
    ``limit_wall_time``, ``limit_tool_calls``).
    """

    turns: int | None = None
    total_tokens: int | None = None
    output_tokens: int | None = None
    wall_seconds: float | None = None
    tool_calls: int | None = None

    def __post_init__(self) -> None:
        for name in ("turns", "total_tokens", "output_tokens", "wall_seconds", "tool_calls"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ConfigurationError(
                    f"Limits({name}=...) must be a positive number, got {value!r}"
                )


class IterationBudget:
    """A thread-safe count of model calls that several agents can share.

    Each model call consumes one unit. When the budget is spent the agent gets
    one grace call asking the model to wrap up; a model that still calls tools
    stops with ``budget_exhausted``.
    """

    def __init__(self, total: int) -> None:
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ConfigurationError(f"IterationBudget(total) must be an int >= 0, got {total!r}")
        self._total = total
        self._used = 0
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return self._total

    @property
    def remaining(self) -> int:
        with self._lock:
            return self._total - self._used

    def consume(self, amount: int = 1) -> bool:
        """Take ``amount`` units if available; False (and nothing taken) otherwise."""
        with self._lock:
            if self._used + amount > self._total:
                return False
            self._used += amount
            return True

    def refund(self, amount: int = 1) -> None:
        """Give back ``amount`` units (never more than were used)."""
        with self._lock:
            self._used = max(0, self._used - amount)

    def __repr__(self) -> str:
        return f"IterationBudget(total={self._total}, remaining={self.remaining})"
