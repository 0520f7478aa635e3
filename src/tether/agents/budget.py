"""A child's view of its parent's iteration budget."""

from __future__ import annotations

from tether.limits import IterationBudget


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
