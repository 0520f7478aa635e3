"""``tether eval run`` (a dataset against an app's agent, for CI) and ``tether eval capture``
(recorded sessions as cases)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.errors import ConfigurationError
from tether.ops.cli_common import STORE, command_group, with_store
from tether.ops.terminal import safe
from tether.ops.worker_cli import load_factory

if TYPE_CHECKING:
    from tether.durable import Store
    from tether.evals import Case, Comparison, Report
    from tether.evals.case import ExpectedCall
    from tether.governance.redaction import ShownSession

app = command_group("eval", "Evaluate an agent on a dataset; turn recorded sessions into cases.")

RUN_HELP = """Run every case of DATASET (.yaml, .yml or .jsonl) on a fresh agent from
--app module:factory (called with session_id= and store= when it takes them), print the
report and exit 0 (passed), 1 (the pass rate is under --fail-under, or a case or evaluator
regressed against --baseline) or 2 (a usage error: a bad dataset or baseline file, a
factory that cannot be loaded, an unwritable --json or --html, a bad --server-url). A
progress bar is drawn on stderr while the runs go when stdout is a terminal (--no-progress
turns it off; it never reaches --json or --html)."""


def usage(message: str) -> NoReturn:
    """Print ``error: message`` (escaped) on stderr and exit 2: the command was misused."""
    Console(stderr=True, highlight=False).print(Text("error: ", style="bold red") + safe(message))
    raise typer.Exit(2)


DATASET = typer.Argument(..., metavar="DATASET", help="The dataset file.")
APP = typer.Option(
    ..., "--app", help="module:factory; factory(session_id=..., store=...) -> Agent."
)
BASELINE = typer.Option(
    None, "--baseline", help="A report.json to compare with: a regression exits 1."
)
FAIL_UNDER = typer.Option(
    None, "--fail-under", min=0.0, max=1.0,
    help="Exit 1 when the pass rate (runs passed of all runs) is under this; default: none.",
)  # fmt: skip
REPORT_JSON = typer.Option(None, "--json", help="Write the report here (JSON).")
REPORT_HTML = typer.Option(
    None, "--html", help="Write the report here as one self-contained page (charts, table)."
)
SERVER_URL = typer.Option(
    None, "--server-url",
    help="The tether server's URL: --html links each run to its session's timeline there.",
)  # fmt: skip
PROGRESS = typer.Option(
    None, "--progress/--no-progress",
    help="A progress bar on stderr; default: on when stdout is a terminal.",
)  # fmt: skip
CONCURRENCY = typer.Option(8, "--concurrency", min=1, max=256, help="Runs at once.")
REPEAT = typer.Option(1, "--repeat", min=1, max=1000, help="Runs of each case.")
RUN_STORE = typer.Option(
    None, "--store", "-s",
    help="Journal every run in this store (SQLite path or postgresql:// URL; created when "
    "missing); default: where the factory's agents journal. Not read from TETHER_STORE: "
    "evals are not journaled into a production store unless asked.",
)  # fmt: skip


@app.command("run", help=RUN_HELP)
def run(
    dataset_path: Path = DATASET,
    app_spec: str = APP,
    baseline: Path | None = BASELINE,
    fail_under: float | None = FAIL_UNDER,
    json_path: Path | None = REPORT_JSON,
    concurrency: int = CONCURRENCY,
    repeat: int = REPEAT,
    store: str | None = RUN_STORE,
    html_path: Path | None = REPORT_HTML,
    server_url: str | None = SERVER_URL,
    progress: bool | None = PROGRESS,
) -> None:
    import sys

    from tether.evals import Dataset, Report
    from tether.evals.report_html import check_server_url

    factory = load_factory(app_spec)  # a bad spec exits 2 (typer.BadParameter)
    try:
        dataset = Dataset.from_file(dataset_path)
        before = None if baseline is None else Report.from_json(baseline)
        check_server_url(server_url)
    except ConfigurationError as exc:
        usage(str(exc))
    if server_url is not None and html_path is None:
        usage("--server-url is for the links of --html: give --html too")
    bar = sys.stdout.isatty() if progress is None else progress

    async def work(opened: Store | None) -> Report:
        return await dataset.evaluate_async(
            factory, concurrency=concurrency, repeat=repeat, store=opened, progress=bar
        )

    if store is None:
        import asyncio

        try:
            report = asyncio.run(work(None))
        except ConfigurationError as exc:
            usage(str(exc))
    else:
        report = with_store(store, work, create=True)
    console = Console(highlight=False, soft_wrap=True)
    report.print(console)
    if json_path is not None:
        try:
            report.to_json(json_path)
        except OSError as exc:
            usage(f"cannot write the report to {str(json_path)!r}: {exc.strerror or exc}")
    if html_path is not None:
        try:
            report.to_html(html_path, server_url=server_url)
        except ConfigurationError as exc:
            usage(str(exc))
    failed = False
    rate = report.pass_rate
    if fail_under is not None and (rate is None or rate < fail_under):
        shown = (
            "no runs: nothing passed, under" if rate is None else f"pass rate {rate:.1%} is under"
        )
        console.print(Text(f"{shown} --fail-under {fail_under:.1%}", "red"))
        failed = True
    if before is not None:
        comparison = report.compare(before)
        _print_comparison(console, comparison)
        failed = failed or comparison.regressed
    raise typer.Exit(1 if failed else 0)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_comparison(console: Console, comparison: Comparison) -> None:
    if comparison.regressions:
        table = Table(title="regressions against --baseline", title_justify="left")
        for name in ("case", "evaluator", "pass rate", "mean score"):
            table.add_column(name)
        for change in comparison.regressions:
            table.add_row(
                safe(change.case, one_line=True),
                safe(change.evaluator or "(the case)", one_line=True),
                f"{_rate(change.before_pass_rate)} -> {_rate(change.after_pass_rate)}",
                f"{_score(change.before_score)} -> {_score(change.after_score)}",
            )
        console.print(table)
    summary = (
        f"against --baseline: {len(comparison.regressions)} regressed, "
        f"{len(comparison.improvements)} improved"
    )
    for label, names in (("new", comparison.added), ("gone", comparison.removed)):
        if names:
            summary += f"; {label}: " + ", ".join(names)
    console.print(safe(summary, "red" if comparison.regressed else ""))


CAPTURE_HELP = """Turn recorded sessions into the cases of a dataset file (--out: .yaml, .yml
or .jsonl): input = the session's first user message, expected_tools = its tool calls in
order (name and arguments, as the model made them), expected_output = its final assistant
text. Everything is read through the redaction of `tether sessions show`: a masked
argument is left out of the expected arguments. The evaluators written are
ToolTrajectory(order="in_order", args="subset") and Contains() (the final text appears in
the answer). The store is opened read-only; a missing session is an error and nothing is
written. Exits 0, 1 (a session missing or unusable) or 2 (a bad --out)."""


SESSION_IDS = typer.Argument(..., metavar="SESSION_ID", help="The recorded sessions (one or more).")
OUT = typer.Option(..., "--out", "-o", help="The dataset file to write.")


@app.command("capture", help=CAPTURE_HELP)
def capture(
    session_ids: list[str] = SESSION_IDS,
    out: Path = OUT,
    store: str = STORE,
) -> None:
    from tether.evals import Contains, Dataset, ToolTrajectory
    from tether.ops.session_load import load_shown

    if out.suffix.lower() not in (".yaml", ".yml", ".jsonl"):
        usage(f"--out {str(out)!r}: a dataset file's name ends in .yaml, .yml or .jsonl")

    cases = [
        case_of(session_id, load_shown(store, session_id)[1])
        for session_id in dict.fromkeys(session_ids)
    ]  # every session is read before anything is written
    dataset = Dataset(cases, [ToolTrajectory(order="in_order", args="subset"), Contains()])
    try:
        dataset.to_file(out)
    except ConfigurationError as exc:
        usage(str(exc))
    except OSError as exc:
        usage(f"cannot write {str(out)!r}: {exc.strerror or exc}")
    Console(highlight=False, soft_wrap=True).print(
        safe(f"{len(cases)} cases written to {os.fspath(out)}")
    )


def case_of(session_id: str, shown: ShownSession) -> Case:
    """The case of one recorded session, from its redacted view."""
    from tether.evals import Case
    from tether.ops.cli_common import fail

    messages = shown.view.messages
    first = next((m for m in messages if m.role == "user" and m.text.strip()), None)
    if first is None:
        fail(f"session {session_id!r} has no user message with text to use as the input")
    answers = [m for m in messages if m.role == "assistant"]
    final = answers[-1].text if answers and answers[-1].text.strip() else None
    try:
        return Case(
            session_id, first.text, expected_output=final,
            expected_tools=expected_tools(messages), metadata={"session_id": session_id},
        )  # fmt: skip
    except ConfigurationError as exc:
        fail(f"session {session_id!r} cannot be a case: {exc}")


def expected_tools(messages: list[Any]) -> list[ExpectedCall]:
    """The tool calls of ``messages`` in order, masked argument values left out (a masked
    value would never match the run's real one; args="subset" checks the rest)."""
    from tether.evals.case import ExpectedCall

    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
    return [ExpectedCall(c.name, _unmasked(c.arguments)) for c in calls]


def _unmasked(value: Any) -> Any:
    from tether.governance.masks import MASK

    if isinstance(value, dict):
        return {k: _unmasked(v) for k, v in value.items() if v != MASK}
    if isinstance(value, list):
        return [_unmasked(v) for v in value]
    return value
