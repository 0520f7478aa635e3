"""A child's view of its parent's iteration budget (``SharedBudget``, in tether.limits)."""

from __future__ import annotations

from tether.limits import SharedBudget

__all__ = ["SharedBudget"]
