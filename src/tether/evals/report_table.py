"""report.print(): the report as a rich table; every name, reason and error escaped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.evals.report import Report


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _cell(report: Report, evaluator: str, case: str) -> Text:
    stats = report.evaluator(evaluator, case)
    if stats.errors and not stats.scored:
        return Text("error", style="red")
    if stats.scored == 0:
        return Text("not scored", style="dim")
    style = "green" if stats.passed == stats.scored else "red"
    mean = "-" if stats.mean is None else f"{stats.mean:.2f}"
    return Text(f"{mean} ({stats.passed}/{stats.scored})", style=style)


def print_report(report: Report, console: Any = None) -> None:
    out: Console = console if console is not None else Console()
    table = Table(title=f"eval {report.run_id}")
    table.add_column("case")
    table.add_column("passed")
    for name in report.evaluators:
        table.add_column(safe(name, one_line=True))
    table.add_column("stop")
    table.add_column("tokens", justify="right")
    table.add_column("latency", justify="right")
    for case in report.cases:
        rows = [r for r in report.rows if r.case == case]
        stats = report.case(case)
        stops = ", ".join(sorted({r.stop_reason or r.status for r in rows}))
        table.add_row(
            safe(case, one_line=True),
            Text(f"{stats.passed}/{stats.runs}", style="green" if stats.passed == stats.runs
                 else "red"),
            *(_cell(report, name, case) for name in report.evaluators),
            safe(stops, one_line=True),
            str(sum(r.total_tokens for r in rows) // max(len(rows), 1)),
            f"{max(r.latency for r in rows):.2f}s",
        )  # fmt: skip
    out.print(table)
    for row in report.rows:
        for name, score in row.scores.items():
            if score.passed is False or score.error:
                line = Text(f"{'error' if score.error else 'failed'}: ", style="red")
                line.append_text(
                    safe(f"{row.case} #{row.repeat} {name}: {score.reason}", one_line=True)
                )
                out.print(line)
        if row.error is not None:
            line = Text("error: ", style="red")
            line.append_text(safe(f"{row.case} #{row.repeat} (session {row.session_id}): "
                                  f"{row.error}", one_line=True))  # fmt: skip
            out.print(line)
    cost = "unknown" if report.cost is None else f"{report.cost} USD"
    out.print(
        f"pass rate {_rate(report.pass_rate)} of {len(report.rows)} runs, "
        f"{len(report.errors)} errors, {report.total_tokens} tokens, cost {cost}",
        markup=False, highlight=False,
    )  # fmt: skip
