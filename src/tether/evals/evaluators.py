"""The built-in evaluators of the output and the run's costs (see also trajectory.py and
policy_outcome.py). Each is saved to a dataset file by its name and :meth:`params`."""

from __future__ import annotations

import asyncio
import importlib
import json
import math
from decimal import Decimal, InvalidOperation
from typing import Any

from tether.errors import ConfigurationError
from tether.evals.run import CaseRun
from tether.evals.score import Evaluator, Score, check_threshold

MAX_TEXT = 100_000
"""Characters of an answer that Contains and Matches read (a model's text is untrusted)."""
MAX_PATTERN = 1000
MATCH_SECONDS = 1.0
"""How long one match may run before it is stopped (Matches)."""


def evaluator_name(evaluator: Evaluator, name: str | None) -> str:
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 100):
        raise ConfigurationError(
            f"{type(evaluator).__name__}(name=...) takes a non-empty str of at most 100 "
            f"characters, got {name!r:.80}"
        )
    return name or type(evaluator).__name__


def json_data(value: Any) -> Any:
    """A structured output as JSON data, to compare with an expected value."""
    if value is None or isinstance(value, str | bool | int | float | list | dict):
        return value
    from pydantic import TypeAdapter

    return TypeAdapter(type(value)).dump_python(value, mode="json")


class Equals(Evaluator):
    """The output (structured, else the text) equals ``value`` (default: the case's
    ``expected_output``)."""

    def __init__(self, value: Any = None, *, name: str | None = None) -> None:
        self.value = value
        self.name = evaluator_name(self, name)

    def params(self) -> dict[str, Any]:
        return {} if self.value is None else {"value": self.value}

    def evaluate(self, run: CaseRun) -> Score:
        expected = self.value if self.value is not None else run.case.expected_output
        if expected is None:
            return Score.not_scored("no expected value (Equals(value) or expected_output)")
        got = json_data(run.output)
        if got == expected:
            return Score(1.0, True, "equal")
        return Score(0.0, False, f"expected {_short(expected)}, got {_short(got)}")


class Contains(Evaluator):
    """The answer's text contains ``value`` (a str, or a list: the fraction present is the
    score); default: the case's ``expected_output`` when it is a str."""

    def __init__(
        self, value: str | list[str] | None = None, *, case_sensitive: bool = True,
        threshold: float = 1.0, name: str | None = None,
    ) -> None:  # fmt: skip
        if value is not None and not (
            isinstance(value, str) or (isinstance(value, list) and value
                                       and all(isinstance(v, str) for v in value))
        ):  # fmt: skip
            raise ConfigurationError(
                f"Contains(value=...) takes a str or a list of str, got {value!r:.80}"
            )
        self.value = value
        self.case_sensitive = bool(case_sensitive)
        self.threshold = check_threshold(threshold, "Contains")
        self.name = evaluator_name(self, name)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.value is None else {"value": self.value}
        if not self.case_sensitive:
            out["case_sensitive"] = False
        if self.threshold != 1.0:
            out["threshold"] = self.threshold
        return out

    def evaluate(self, run: CaseRun) -> Score:
        wanted = self.value if self.value is not None else run.case.expected_output
        if isinstance(wanted, str):
            wanted = [wanted]
        if not isinstance(wanted, list) or not wanted:
            return Score.not_scored(
                "no text to look for (Contains(value) or a str expected_output)"
            )
        text = run.text[:MAX_TEXT]
        if not self.case_sensitive:
            text = text.casefold()
        missing = [w for w in wanted if (w if self.case_sensitive else w.casefold()) not in text]
        found = len(wanted) - len(missing)
        reason = "all present" if not missing else "missing: " + ", ".join(map(_short, missing))
        return Score.of(found / len(wanted), self.threshold, reason)


class Matches(Evaluator):
    """The answer's text (its first MAX_TEXT characters) matches ``pattern``.

    ``regex.search`` (the ``regex`` package, ``tether[evals]``): the pattern is compiled
    once, and a match runs on a worker thread and is stopped after MATCH_SECONDS (an
    error cell: a pattern that backtracks without bound cannot hang the evaluation).
    """

    def __init__(self, pattern: str, *, flags: str = "", name: str | None = None) -> None:
        if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
            raise ConfigurationError(
                f"Matches(pattern) takes a str of at most {MAX_PATTERN} characters, got "
                f"{pattern!r:.80}"
            )
        if not isinstance(flags, str) or set(flags) - set("ims"):
            raise ConfigurationError(f"Matches(flags=...) takes letters of 'ims', got {flags!r}")
        engine = _regex()
        known = {"i": engine.IGNORECASE, "m": engine.MULTILINE, "s": engine.DOTALL}
        try:
            self.compiled = engine.compile(pattern, sum((known[f] for f in set(flags)), 0))
        except engine.error as exc:
            raise ConfigurationError(f"Matches({pattern!r:.80}): not a regex ({exc})") from None
        self.pattern = pattern
        self.flags = flags
        self.name = evaluator_name(self, name)

    def params(self) -> dict[str, Any]:
        return {"pattern": self.pattern, **({"flags": self.flags} if self.flags else {})}

    async def score(self, run: CaseRun) -> Score:
        return await asyncio.to_thread(_scored, self, run)

    def evaluate(self, run: CaseRun) -> Score:
        try:
            found = self.compiled.search(run.text[:MAX_TEXT], timeout=MATCH_SECONDS)
        except TimeoutError:
            return Score.failed(
                f"matching {self.pattern!r:.80} took more than {MATCH_SECONDS:g} s (the "
                "pattern backtracks without bound); stopped"
            )
        if found:
            return Score(1.0, True, f"matches {self.pattern!r:.80}")
        return Score(0.0, False, f"no match for {self.pattern!r:.80} in {_short(run.text)}")


def _scored(evaluator: Evaluator, run: CaseRun) -> Score:
    try:
        return evaluator.evaluate(run)
    except Exception as exc:
        return Score.failed(f"{type(exc).__name__}: {exc}")


def _regex() -> Any:
    try:
        return importlib.import_module("regex")
    except ImportError:
        raise ConfigurationError(
            "Matches needs the regex package (a bounded match): pip install 'tether[evals]'"
        ) from None


class ValidOutput(Evaluator):
    """The structured output validates against ``output_type`` (default: the type the run
    asked for: the case's, else the evaluation's); a run without one has its final text
    checked as the agent would check it."""

    def __init__(self, output_type: Any = None, *, name: str | None = None) -> None:
        self.output_type = output_type
        self.name = evaluator_name(self, name)

    def params(self) -> dict[str, Any]:
        if self.output_type is not None:
            raise ConfigurationError(
                f"evaluator {self.name!r}: ValidOutput(output_type) is code and cannot be "
                "saved to a dataset file; save ValidOutput() and pass output_type= to evaluate"
            )
        return {}

    def evaluate(self, run: CaseRun) -> Score:
        from tether.structured import OutputSpec

        wanted = self.output_type if self.output_type is not None else run.output_type
        if wanted is None:
            return Score.not_scored("no output_type (ValidOutput(T), the case's or evaluate's)")
        spec = OutputSpec(wanted)
        if run.result is not None and run.result.output is not None:
            try:
                spec.adapter.validate_python(run.result.output)
            except Exception as exc:  # pydantic's ValidationError
                return Score(0.0, False, f"not a valid {spec.name}: {exc}"[:2000])
            return Score(1.0, True, f"a valid {spec.name}")
        checked = spec.check(run.text[:MAX_TEXT])
        if checked.error is None:
            return Score(1.0, True, f"a valid {spec.name}")
        return Score(0.0, False, checked.error)


class _Max(Evaluator):
    """Passes at or under ``limit``; over it, the score is ``limit / measured``."""

    unit = ""

    def __init__(self, limit: Any, *, name: str | None = None) -> None:
        self.limit = self._check(limit)
        self.name = evaluator_name(self, name)

    def _check(self, limit: Any) -> Any:
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int | float)
            or not (math.isfinite(limit) and limit > 0)
        ):
            raise ConfigurationError(
                f"{type(self).__name__}(limit) takes a positive number, got {limit!r}"
            )
        return limit

    def params(self) -> dict[str, Any]:
        return {"limit": self.limit}

    def measure(self, run: CaseRun) -> Any:
        raise NotImplementedError

    def evaluate(self, run: CaseRun) -> Score:
        measured = self.measure(run)
        if measured is None:
            return Score.not_scored(f"{type(self).__name__}: the run's cost is unknown "
                                    "(no price for its model)")  # fmt: skip
        shown = f"{measured}{self.unit} (limit {self.limit}{self.unit})"
        if measured <= self.limit:
            return Score(1.0, True, shown)
        return Score(float(self.limit / measured), False, f"over: {shown}")


class MaxTokens(_Max):
    """The run's total tokens (answered interrupts' resumes included) are at most ``limit``."""

    def measure(self, run: CaseRun) -> Any:
        return run.total_tokens


class MaxLatency(_Max):
    """The run took at most ``limit`` seconds of wall-clock time."""

    unit = "s"

    def measure(self, run: CaseRun) -> Any:
        return round(run.latency, 6)


class MaxCost(_Max):
    """The run cost at most ``limit`` USD (``Result.usage.cost``); not scored when the
    cost is unknown, never 0."""

    unit = " USD"

    def _check(self, limit: Any) -> Any:
        try:
            value = Decimal(str(limit)) if not isinstance(limit, bool) else None
        except InvalidOperation:
            value = None
        if value is None or not value.is_finite() or value <= 0:
            raise ConfigurationError(f"MaxCost(limit) takes a positive USD amount, got {limit!r}")
        return value

    def params(self) -> dict[str, Any]:
        return {"limit": str(self.limit)}

    def measure(self, run: CaseRun) -> Any:
        return run.cost


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return repr(text[:77] + "...") if len(text) > 80 else repr(text)
