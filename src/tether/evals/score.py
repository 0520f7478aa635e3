"""An evaluator's verdict on one run, and the evaluator protocol itself."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.errors import ConfigurationError
from tether.evals.run import CaseRun

MAX_REASON = 2000


@dataclass(frozen=True, slots=True)
class Score:
    """``score`` in [0, 1], ``passed`` against the evaluator's threshold, ``reason``.

    ``score`` and ``passed`` are None when the evaluator could not score the run (a
    "not scored" row, never a 0); ``error`` is set when the evaluator itself raised.
    """

    score: float | None
    passed: bool | None
    reason: str = ""
    error: bool = False

    @property
    def scored(self) -> bool:
        return self.score is not None

    @classmethod
    def of(cls, score: float, threshold: float, reason: str = "") -> Score:
        """A score judged against ``threshold``."""
        return cls(score, score >= threshold, reason[:MAX_REASON])

    @classmethod
    def not_scored(cls, reason: str) -> Score:
        return cls(None, None, reason[:MAX_REASON])

    @classmethod
    def failed(cls, reason: str) -> Score:
        """The evaluator raised: an error cell, not a 0."""
        return cls(None, None, reason[:MAX_REASON], error=True)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"score": self.score, "passed": self.passed, "reason": self.reason}
        if self.error:
            out["error"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Score:
        return cls(data["score"], data["passed"], data.get("reason", ""), bool(data.get("error")))


def check_threshold(threshold: Any, owner: str) -> float:
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 <= threshold <= 1
    ):
        raise ConfigurationError(
            f"{owner}(threshold=...) takes a number in [0, 1], got {threshold!r}"
        )
    return float(threshold)


class Evaluator:
    """Scores one run of a case. Subclasses set ``name``, ``threshold`` and implement
    :meth:`evaluate`; the built-ins also give their ``params`` (how a file saves them)."""

    name: str
    threshold: float = 1.0

    def evaluate(self, run: CaseRun) -> Score:
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The constructor arguments a dataset file saves (built-ins only)."""
        raise ConfigurationError(
            f"evaluator {self.name!r} is custom code and cannot be saved to a dataset file; "
            "add it to the Dataset after loading the file"
        )

    async def score(self, run: CaseRun) -> Score:
        """:meth:`evaluate` with its failures as an error cell."""
        try:
            return self.evaluate(run)
        except Exception as exc:  # the evaluator's bug is a row, not a crash
            return Score.failed(f"{type(exc).__name__}: {exc}")


class Custom(Evaluator):
    """Any function of the run (sync or async) returning a bool, a float in [0, 1] or a
    :class:`Score`; a sync function runs on a worker thread."""

    def __init__(
        self, function: Callable[[CaseRun], Any], *, name: str | None = None,
        threshold: float = 1.0,
    ) -> None:  # fmt: skip
        if not callable(function):
            raise ConfigurationError(f"Custom(...) takes a function of the run, got {function!r}")
        self.function = function
        self.name = name or str(getattr(function, "__name__", type(function).__name__))
        self.threshold = check_threshold(threshold, "Custom")

    async def score(self, run: CaseRun) -> Score:
        try:
            if inspect.iscoroutinefunction(self.function):
                value = await self.function(run)
            else:
                value = await asyncio.to_thread(self.function, run)
                if inspect.isawaitable(value):
                    value = await value
            return self._judge(value)
        except Exception as exc:
            return Score.failed(f"{type(exc).__name__}: {exc}")

    def _judge(self, value: Any) -> Score:
        if isinstance(value, Score):
            if value.score is not None and not 0 <= value.score <= 1:
                return Score.failed(f"{self.name} returned a score of {value.score}, not in [0, 1]")
            if value.score is None or value.passed is not None:
                return value
            return Score.of(value.score, self.threshold, value.reason)
        if isinstance(value, bool):
            return Score(1.0 if value else 0.0, value, "")
        if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
            return Score.of(float(value), self.threshold)
        return Score.failed(
            f"{self.name} returned {value!r:.80}: a custom evaluator returns a bool, a float "
            "in [0, 1] or a Score"
        )


def as_evaluator(value: Any) -> Evaluator:
    """An Evaluator, or a function of the run wrapped in :class:`Custom`."""
    if isinstance(value, Evaluator):
        return value
    if callable(value) and not isinstance(value, type):
        return Custom(value)
    raise ConfigurationError(
        f"an evaluator is an Evaluator (Equals(), ToolTrajectory(...), ...) or a function of "
        f"the run, got {value!r:.80}"
    )
