"""Report: one row per run of a case, its scores by evaluator, and the aggregates."""

from __future__ import annotations

import json
import os
import statistics
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.evals.score import MAX_REASON, Score
from tether.messages import add_cost, read_cost

if TYPE_CHECKING:
    from tether.evals.compare import Comparison
    from tether.evals.run import CaseRun
    from tether.governance.masks import Masker

FORMAT = "tether.evals.report/1"


@dataclass
class RunRow:
    """One run of one case: where it ran, how it ended, what it used, and its scores
    (none for an error row: ``error`` says what raised)."""

    case: str
    repeat: int
    session_id: str | None
    status: str
    stop_reason: str | None
    reason: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None
    latency: float = 0.0
    interrupts: list[str] = field(default_factory=list)
    scores: dict[str, Score] = field(default_factory=dict)

    @classmethod
    def of(cls, run: CaseRun, scores: dict[str, Score], masker: Masker) -> RunRow:
        """The row of ``run``: its free text (reasons, errors) through the one redaction
        path (``masker``: what the run's agent hides), as every export of tether's."""
        result = run.result
        reason = None if result is None or result.reason is None else masker.text(result.reason)
        error = None if run.error is None else masker.text(run.error)
        shown = {
            name: replace(s, reason=masker.text(s.reason[:MAX_REASON]))
            for name, s in scores.items()
        }
        return cls(
            run.case.name, run.repeat, run.session_id, run.status, run.stop_reason, reason,
            error, run.input_tokens, run.output_tokens, run.cost, run.latency,
            [masker.text(it.name) for it in run.interrupts], shown,
        )  # fmt: skip

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def passed(self) -> bool:
        """No error, and every evaluator that scored the run passed it (an evaluator that
        raised counts against it; one that could not score does not)."""
        if self.status == "error":
            return False
        return all(s.passed is not False and not s.error for s in self.scores.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "case": self.case, "repeat": self.repeat, "session_id": self.session_id,
            "status": self.status, "stop_reason": self.stop_reason, "reason": self.reason,
            "error": self.error, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": None if self.cost is None else str(self.cost),
            "latency": self.latency, "interrupts": self.interrupts,
            "scores": {name: s.to_dict() for name, s in self.scores.items()},
        }  # fmt: skip
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRow:
        return cls(
            data["case"], data["repeat"], data["session_id"], data["status"],
            data["stop_reason"], data.get("reason"), data.get("error"),
            data.get("input_tokens", 0), data.get("output_tokens", 0),
            read_cost(data.get("cost")), data.get("latency", 0.0),
            list(data.get("interrupts") or []),
            {n: Score.from_dict(s) for n, s in (data.get("scores") or {}).items()},
        )  # fmt: skip


@dataclass
class Stats:
    """How one evaluator (or one case) did over the runs."""

    runs: int = 0
    scored: int = 0
    passed: int = 0
    not_scored: int = 0
    errors: int = 0
    mean: float | None = None

    @property
    def pass_rate(self) -> float | None:
        """Passed of the scored runs (None when none was scored)."""
        return None if self.scored == 0 else self.passed / self.scored


class Report:
    """The rows of an evaluation (in case order, then repeat) and their aggregates."""

    def __init__(
        self, rows: list[RunRow], evaluators: list[str], *, run_id: str = "",
        started: float = 0.0, repeat: int = 1,
    ) -> None:  # fmt: skip
        self.rows = rows
        self.evaluators = evaluators
        self.run_id = run_id
        self.started = started
        self.repeat = repeat

    @property
    def cases(self) -> list[str]:
        return list(dict.fromkeys(r.case for r in self.rows))

    @property
    def pass_rate(self) -> float | None:
        """Passed runs of all runs, error rows included (None without runs)."""
        return None if not self.rows else sum(r.passed for r in self.rows) / len(self.rows)

    @property
    def errors(self) -> list[RunRow]:
        return [r for r in self.rows if r.status == "error"]

    def evaluator(self, name: str, case: str | None = None) -> Stats:
        """One evaluator's counts and mean score (over one case's runs when given)."""
        stats = Stats()
        values: list[float] = []
        for row in self.rows:
            if case is not None and row.case != case:
                continue
            stats.runs += 1
            score = row.scores.get(name)
            if score is None:
                continue
            if score.error:
                stats.errors += 1
            elif score.score is None:
                stats.not_scored += 1
            else:
                stats.scored += 1
                stats.passed += bool(score.passed)
                values.append(score.score)
        stats.mean = statistics.fmean(values) if values else None
        return stats

    def case(self, name: str) -> Stats:
        """One case's runs: ``passed`` of ``runs`` (its pass rate over the repeats)."""
        rows = [r for r in self.rows if r.case == name]
        stats = Stats(runs=len(rows), scored=len(rows), passed=sum(r.passed for r in rows),
                      errors=sum(r.status == "error" for r in rows))  # fmt: skip
        return stats

    @property
    def total_tokens(self) -> int:
        return sum(r.total_tokens for r in self.rows)

    @property
    def cost(self) -> Decimal | None:
        """USD of the runs whose cost is known (None when no run's is)."""
        total: Decimal | None = None
        for row in self.rows:
            total = add_cost(total, row.cost)
        return total

    def summary(self) -> dict[str, Any]:
        latencies = [r.latency for r in self.rows]
        return {
            "runs": len(self.rows), "pass_rate": self.pass_rate, "errors": len(self.errors),
            "interrupted": sum(r.status == "interrupted" for r in self.rows),
            "total_tokens": self.total_tokens,
            "cost": None if self.cost is None else str(self.cost),
            "latency_mean": statistics.fmean(latencies) if latencies else None,
            "latency_max": max(latencies, default=None),
            "evaluators": {
                name: {"pass_rate": s.pass_rate, "mean": s.mean, "scored": s.scored,
                       "not_scored": s.not_scored, "errors": s.errors}
                for name in self.evaluators for s in [self.evaluator(name)]
            },
        }  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "run_id": self.run_id, "started": self.started,
            "repeat": self.repeat, "evaluators": self.evaluators,
            "summary": self.summary(), "rows": [r.to_dict() for r in self.rows],
        }  # fmt: skip

    def to_json(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")  # fmt: skip

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> Report:
        from tether.evals.dataset_io import read_bounded

        text = read_bounded(path, "report file")
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ConfigurationError(
                    f"report file {str(path)!r}: format {data.get('format')!r:.60}, expected "
                    f"{FORMAT!r}"
                )
            rows = [RunRow.from_dict(r) for r in data["rows"]]
            return cls(rows, list(data["evaluators"]), run_id=data.get("run_id", ""),
                       started=data.get("started", 0.0), repeat=data.get("repeat", 1))  # fmt: skip
        except ConfigurationError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise ConfigurationError(
                f"report file {str(path)!r} is not a tether evals report: "
                f"{type(exc).__name__}: {exc}"
            ) from None

    def compare(self, baseline: Report) -> Comparison:
        """The regressions and improvements against ``baseline``, per case and evaluator."""
        from tether.evals.compare import compare

        return compare(baseline, self)

    def to_html(self, path: str | os.PathLike[str], server_url: str | None = None) -> None:
        """One self-contained page (no script, nothing loaded): the score table, charts of
        the score distribution, pass rate per evaluator, latency and tokens, and with
        ``server_url`` (the tether server's) a link per run to its session's timeline."""
        from tether.evals.report_html import write

        write(self, path, server_url)

    def print(self, console: Any = None) -> None:
        """A rich table of the cases and evaluators, then the totals (untrusted text
        escaped for the terminal)."""
        from tether.evals.report_table import print_report

        print_report(self, console)
