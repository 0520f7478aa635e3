"""PolicyOutcome: what the control plane did to a run (denials, confirmations,
interrupts, the stop reason) against what the case expects."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tether.errors import ConfigurationError
from tether.evals.run import CaseRun
from tether.evals.score import Evaluator, Score, check_threshold

_KINDS = ("denied", "confirmed", "interrupted")


class PolicyOutcome(Evaluator):
    """Each given expectation is checked; None leaves it unchecked.

    ``denied``: the tools whose calls were denied (a tool result with status
    ``denied``); ``confirmed``: the tools a Confirm asked about (its interrupt, answered
    or pending); ``interrupted``: the interrupts raised, by tool name (else interrupt
    name); ``stop_reason``: the final stop reason. Lists compare as multisets; the
    score is the fraction of checks met (each expected and each unexpected item is one).
    """

    def __init__(
        self, *, denied: list[str] | None = None, confirmed: list[str] | None = None,
        interrupted: list[str] | None = None, stop_reason: str | None = None,
        threshold: float = 1.0, name: str | None = None,
    ) -> None:  # fmt: skip
        self.expected: dict[str, list[str] | None] = {}
        for kind, value in zip(_KINDS, (denied, confirmed, interrupted), strict=True):
            if value is not None and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                raise ConfigurationError(
                    f"PolicyOutcome({kind}=...) takes a list of tool names, got {value!r:.80}"
                )
            self.expected[kind] = value
        if stop_reason is not None and not isinstance(stop_reason, str):
            raise ConfigurationError(
                f"PolicyOutcome(stop_reason=...) takes a stop reason, got {stop_reason!r}"
            )
        if stop_reason is None and all(v is None for v in self.expected.values()):
            raise ConfigurationError(
                "PolicyOutcome() needs an expectation: denied=, confirmed=, interrupted= or "
                "stop_reason="
            )
        self.stop_reason = stop_reason
        self.threshold = check_threshold(threshold, "PolicyOutcome")
        self.name = name or "PolicyOutcome"

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in self.expected.items() if v is not None}
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        if self.threshold != 1.0:
            out["threshold"] = self.threshold
        return out

    def evaluate(self, run: CaseRun) -> Score:
        seen = observed(run)
        checks = met = 0
        problems: list[str] = []
        for kind in _KINDS:
            wanted = self.expected[kind]
            if wanted is None:
                continue
            want, got = Counter(wanted), Counter(seen[kind])
            short, surplus = want - got, got - want
            checks += sum(want.values()) + sum(surplus.values())
            met += sum(want.values()) - sum(short.values())
            problems += [f"expected {kind} {name}, was not" for name in sorted(short.elements())]
            problems += [f"unexpected {kind} {name}" for name in sorted(surplus.elements())]
        if self.stop_reason is not None:
            checks += 1
            if run.stop_reason == self.stop_reason:
                met += 1
            else:
                problems.append(f"stop reason {run.stop_reason!r}, expected {self.stop_reason!r}")
        score = 1.0 if checks == 0 else met / checks
        return Score.of(score, self.threshold, "; ".join(problems) or "as expected")


def observed(run: CaseRun) -> dict[str, list[str]]:
    """The denials, confirmations and interrupts of a run, by tool (or interrupt) name."""
    denied = [r.name for r in run.tool_results if r.status == "denied"]
    confirmed: list[str] = []
    interrupted: list[str] = []
    for it in run.interrupts:
        label = it.tool_call.name if it.tool_call is not None else it.name
        interrupted.append(label)
        if it.name.startswith("confirm:"):
            confirmed.append(label)
    return {"denied": denied, "confirmed": confirmed, "interrupted": interrupted}
