"""Report.compare: what changed, per case and evaluator, against a baseline report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.evals.report import Report, Stats

_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Change:
    """One case's result under one evaluator (None: the case as a whole, its pass rate),
    before and after: pass rates over the scored runs, mean scores."""

    case: str
    evaluator: str | None
    before_pass_rate: float | None
    after_pass_rate: float | None
    before_score: float | None
    after_score: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case, "evaluator": self.evaluator,
            "before_pass_rate": self.before_pass_rate, "after_pass_rate": self.after_pass_rate,
            "before_score": self.before_score, "after_score": self.after_score,
        }  # fmt: skip


@dataclass
class Comparison:
    """``regressions`` and ``improvements``; cases ``added`` or ``removed`` since the
    baseline. A regression is a lower pass rate, or the same with a lower mean score."""

    regressions: list[Change] = field(default_factory=list)
    improvements: list[Change] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "regressions": [c.to_dict() for c in self.regressions],
            "improvements": [c.to_dict() for c in self.improvements],
            "added": self.added, "removed": self.removed,
        }  # fmt: skip


def compare(baseline: Report, current: Report) -> Comparison:
    out = Comparison()
    before_cases, after_cases = baseline.cases, current.cases
    out.added = [c for c in after_cases if c not in before_cases]
    out.removed = [c for c in before_cases if c not in after_cases]
    shared_evaluators = [e for e in current.evaluators if e in baseline.evaluators]
    for case in (c for c in after_cases if c in before_cases):
        pairs: list[tuple[str | None, Stats, Stats]] = [
            (None, baseline.case(case), current.case(case))
        ]
        pairs += [(e, baseline.evaluator(e, case), current.evaluator(e, case))
                  for e in shared_evaluators]  # fmt: skip
        for name, before, after in pairs:
            direction = _direction(before, after)
            if direction == 0:
                continue
            change = Change(case, name, before.pass_rate, after.pass_rate, before.mean, after.mean)
            (out.regressions if direction < 0 else out.improvements).append(change)
    return out


def _direction(before: Stats, after: Stats) -> int:
    """-1 worse, 1 better, 0 the same (a side that was not scored compares as nothing)."""
    if before.pass_rate is None or after.pass_rate is None:
        return 0
    if after.pass_rate < before.pass_rate - _EPSILON:
        return -1
    if after.pass_rate > before.pass_rate + _EPSILON:
        return 1
    if before.mean is None or after.mean is None:
        return 0
    if after.mean < before.mean - _EPSILON:
        return -1
    return 1 if after.mean > before.mean + _EPSILON else 0
