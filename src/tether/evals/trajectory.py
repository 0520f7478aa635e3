"""ToolTrajectory: the tool calls a run made against the ones its case expects, with
partial credit and a reason naming the missing, extra and misordered calls."""

from __future__ import annotations

from typing import Any, Literal

from tether.errors import ConfigurationError
from tether.evals.case import ExpectedCall, expected_calls
from tether.evals.run import CaseRun
from tether.evals.score import Evaluator, Score, check_threshold
from tether.messages import ToolCall

Order = Literal["exact", "in_order", "any"]
Args = Literal["exact", "subset", "ignore"]
MAX_CALLS = 500
"""Calls compared per side (a run that made more is scored on its first MAX_CALLS)."""


class ToolTrajectory(Evaluator):
    """The run's tool calls against ``expected`` (default: the case's ``expected_tools``).

    ``order``: ``exact`` (the same calls in the same order, nothing else), ``in_order``
    (the expected calls in that order, others allowed between) or ``any`` (the expected
    calls in any order, others allowed). ``args``: ``exact`` (equal arguments),
    ``subset`` (the expected arguments are among the call's, nested mappings too) or
    ``ignore`` (names only); an expected call without args matches any arguments.
    The score is the fraction of expected calls matched (``exact``: of the longer side).
    """

    def __init__(
        self, expected: list[Any] | None = None, *, order: Order = "exact",
        args: Args = "exact", threshold: float = 1.0, name: str | None = None,
    ) -> None:  # fmt: skip
        if order not in ("exact", "in_order", "any"):
            raise ConfigurationError(
                f"ToolTrajectory(order=...) is 'exact', 'in_order' or 'any', got {order!r}"
            )
        if args not in ("exact", "subset", "ignore"):
            raise ConfigurationError(
                f"ToolTrajectory(args=...) is 'exact', 'subset' or 'ignore', got {args!r}"
            )
        self.expected = None if expected is None else expected_calls(expected, "ToolTrajectory")
        self.order: Order = order
        self.args: Args = args
        self.threshold = check_threshold(threshold, "ToolTrajectory")
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ConfigurationError(
                f"ToolTrajectory(name=...) takes a non-empty str, got {name!r}"
            )
        self.name = name or "ToolTrajectory"

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"order": self.order, "args": self.args}
        if self.expected is not None:
            out["expected"] = [c.to_data() for c in self.expected]
        if self.threshold != 1.0:
            out["threshold"] = self.threshold
        return out

    def evaluate(self, run: CaseRun) -> Score:
        expected = self.expected if self.expected is not None else run.case.expected_tools
        if expected is None:
            return Score.not_scored("no expected tool calls (ToolTrajectory(expected) or "
                                    "expected_tools)")  # fmt: skip
        expected = expected[:MAX_CALLS]
        actual = run.tool_calls[:MAX_CALLS]
        ok = [[self._fits(e, a) for a in actual] for e in expected]
        # In order: a longest common subsequence; the rest of the expected calls that
        # still match a left-over call are misordered, the others missing.
        placed = {} if self.order == "any" else _in_order(ok)
        rest = _bipartite(ok, set(placed), set(placed.values()))
        matched = len(rest) if self.order == "any" else len(placed)
        misordered = [] if self.order == "any" else sorted(rest)
        used = set(placed.values()) | set(rest.values())
        missing = [i for i in range(len(expected)) if i not in placed and i not in rest]
        extra = [j for j in range(len(actual)) if j not in used]
        total = max(len(expected), len(actual)) if self.order == "exact" else len(expected)
        score = 1.0 if total == 0 else matched / total
        parts = [f"{matched} of {len(expected)} expected calls matched (order: {self.order})"]
        if missing:
            parts.append("missing: " + ", ".join(_show(expected[i]) for i in missing))
        if misordered:
            parts.append("misordered: " + ", ".join(_show(expected[i]) for i in misordered))
        if extra:
            parts.append("extra: " + ", ".join(_show_call(actual[j]) for j in extra))
        return Score.of(score, self.threshold, "; ".join(parts))

    def _fits(self, expected: ExpectedCall, call: ToolCall) -> bool:
        if expected.name != call.name:
            return False
        if self.args == "ignore" or expected.args is None:
            return True
        if self.args == "exact":
            return expected.args == call.arguments
        return _subset(expected.args, call.arguments)


def _subset(want: Any, got: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(
            k in got and _subset(v, got[k]) for k, v in want.items()
        )
    return bool(want == got)


def _bipartite(ok: list[list[bool]], skip: set[int], taken: set[int]) -> dict[int, int]:
    """A maximum matching of expected to actual calls (Kuhn's augmenting paths), leaving
    out the expected calls ``skip`` and the actual calls ``taken``."""
    owner: dict[int, int] = {}  # actual -> expected

    def augment(i: int, seen: set[int]) -> bool:
        for j, fits in enumerate(ok[i]):
            if fits and j not in seen and j not in taken:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(ok)):
        if i not in skip:
            augment(i, set())
    return {i: j for j, i in owner.items()}


def _in_order(ok: list[list[bool]]) -> dict[int, int]:
    """A longest common subsequence of expected and actual calls: expected -> actual."""
    n, m = len(ok), len(ok[0]) if ok else 0
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = best[i + 1][j + 1] + 1 if ok[i][j] else max(best[i + 1][j], best[i][j + 1])
    pairs: dict[int, int] = {}
    i = j = 0
    while i < n and j < m:
        if ok[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _show(call: ExpectedCall) -> str:
    return call.name if call.args is None else f"{call.name}({_args(call.args)})"


def _show_call(call: ToolCall) -> str:
    return f"{call.name}({_args(call.arguments)})"


def _args(args: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= 80 else text[:77] + "..."
