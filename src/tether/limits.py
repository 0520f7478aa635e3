"""Run limits and a shareable iteration budget."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.result import RunUsage, StopReason


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-invocation ceilings, checked at cycle boundaries (None = no limit).

    ``turns`` counts model calls; ``wall_seconds`` is wall-clock time since the
    invocation started. Each limit that is hit stops the run with its own stop
    reason (``limit_turns``, ``limit_total_tokens``, ``limit_output_tokens``,
    ``limit_wall_time``, ``limit_tool_calls``). ``cost`` is USD (a ``Decimal``, or an int
    or decimal string): the run stops with ``cost_limit`` before a model call whose
    estimated cost (the mean of its priced calls so far; for the first call, its input
    tokens at the model's input price) would take it past the limit.
    """

    turns: int | None = None
    total_tokens: int | None = None
    output_tokens: int | None = None
    wall_seconds: float | None = None
    tool_calls: int | None = None
    cost: Decimal | None = None

    def __post_init__(self) -> None:
        if self.cost is not None:
            object.__setattr__(self, "cost", _usd(self.cost))
        for name in ("turns", "total_tokens", "output_tokens", "wall_seconds", "tool_calls"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ConfigurationError(
                    f"Limits({name}=...) must be a positive number, got {value!r}"
                )

    def exceeded(self, usage: RunUsage, elapsed: float) -> tuple[StopReason, str] | None:
        """The stop reason and its explanation for the first limit reached, else None.

        ``elapsed`` is the invocation's wall-clock time in seconds.
        """
        if self.turns is not None and usage.model_calls >= self.turns:
            return "limit_turns", f"reached the limit of {self.turns} model call(s)"
        if self.total_tokens is not None and usage.total_tokens >= self.total_tokens:
            return (
                "limit_total_tokens",
                f"used {usage.total_tokens} tokens; the limit is {self.total_tokens}",
            )
        if self.output_tokens is not None and usage.output_tokens >= self.output_tokens:
            return (
                "limit_output_tokens",
                f"used {usage.output_tokens} output tokens; the limit is {self.output_tokens}",
            )
        if self.wall_seconds is not None and elapsed >= self.wall_seconds:
            return "limit_wall_time", f"ran {elapsed:.1f} s; the limit is {self.wall_seconds:g} s"
        if self.tool_calls is not None and usage.tool_calls >= self.tool_calls:
            return (
                "limit_tool_calls",
                f"ran {usage.tool_calls} tool call(s); the limit is {self.tool_calls}",
            )
        if self.cost is not None and usage.cost is not None and usage.model_calls:
            next_call = usage.cost / usage.model_calls
            if usage.cost + next_call > self.cost:
                return (
                    "cost_limit",
                    f"spent ${usage.cost:.6f}; the next model call (about ${next_call:.6f}) "
                    f"would pass the limit of ${self.cost}",
                )
        return None


def _usd(value: object) -> Decimal:
    """A positive, finite USD amount from a Decimal, an int or a decimal string."""
    if isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int | str) and not isinstance(value, bool):
        try:
            amount = Decimal(value)
        except InvalidOperation:
            amount = Decimal("NaN")
    else:
        raise ConfigurationError(
            f"Limits(cost=...) must be a Decimal in USD (Decimal('2.50')), got "
            f"{type(value).__name__} {value!r}"
        )
    if not amount.is_finite() or amount <= 0:
        raise ConfigurationError(
            f"Limits(cost=...) must be a positive amount in USD, got {value!r}"
        )
    return amount


DEFAULT_MAX_TURNS = 90
"""The model calls an invocation may make when the Agent is given no limits and no budget
(Hermes' default of 90 iterations)."""

DEFAULT_LIMITS = Limits(turns=DEFAULT_MAX_TURNS)
"""``Agent(limits=...)``'s default: a cap of :data:`DEFAULT_MAX_TURNS` model calls."""


class IterationBudget:
    """A thread-safe count of model calls that several agents can share.

    Each model call consumes one unit. When the budget is spent the agent gets
    one grace call asking the model to wrap up; a model that still calls tools
    stops with ``budget_exhausted``. With ``refund_cheap``, a turn whose tool calls all
    go to tools marked ``cheap`` (``@tool(cheap=True)``) gives its unit back.
    """

    grace: bool = True
    """Whether the agent drawing on this budget gets the wrap-up call when it is spent
    (a sub-agent's ``SharedBudget`` does not: only the top level does)."""

    def __init__(self, total: int, *, refund_cheap: bool = False) -> None:
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ConfigurationError(f"IterationBudget(total) must be an int >= 0, got {total!r}")
        self.refund_cheap = refund_cheap
        """Hermes' rule: a model turn whose tool calls are all ``cheap`` tools is given back."""
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


class SharedBudget(IterationBudget):
    """Draws every model call of a child on ``parent`` (one cap for the whole tree) and,
    when given, on the child's ``own`` cap too. No grace call: only the top level wraps
    up with one; a child whose budget is spent stops with ``budget_exhausted``."""

    grace = False

    def __init__(self, parent: IterationBudget, own: IterationBudget | None = None) -> None:
        super().__init__(0, refund_cheap=parent.refund_cheap)
        self.parent = parent
        self.own = own

    @property
    def total(self) -> int:
        return self.own.total if self.own is not None else self.parent.total

    @property
    def remaining(self) -> int:
        if self.own is None:
            return self.parent.remaining
        return min(self.own.remaining, self.parent.remaining)

    def consume(self, amount: int = 1) -> bool:
        if self.own is not None and not self.own.consume(amount):
            return False
        if not self.parent.consume(amount):
            if self.own is not None:
                self.own.refund(amount)
            return False
        return True

    def refund(self, amount: int = 1) -> None:
        self.parent.refund(amount)
        if self.own is not None:
            self.own.refund(amount)

    def __repr__(self) -> str:
        return f"SharedBudget(parent={self.parent!r}, own={self.own!r})"
