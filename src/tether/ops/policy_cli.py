"""``tether policy check``: what the app's policy would do to the tool calls a store recorded
(:mod:`tether.evals.policy_check`). Reads the store read-only; runs no tool and no model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.ops.cli_common import JSON, STORE, command_group, fail, with_store
from tether.ops.terminal import json_line, safe
from tether.ops.worker_cli import load_factory

if TYPE_CHECKING:
    from tether.durable import Store
    from tether.evals.policy_check import PolicyReport

app = command_group("policy", "What a policy would do to recorded traffic.")

CHECK_SESSION = "tether-policy-check"
"""The session id the factory is called with (the agent judges other sessions' calls)."""
_STYLE = {
    "deny": "red",
    "guide": "yellow",
    "confirm": "yellow",
    "transform": "cyan",
    "error": "red",
}
_SHOWN = ("deny", "guide", "confirm", "transform", "error")


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r} is not an ISO date or time (2025-03-01, 2025-03-01T14:00:00+00:00)",
            param_hint="'--since'",
        ) from None
    return moment if moment.tzinfo is not None else moment.astimezone(UTC)


@app.command("check")
def check(
    app_spec: str = typer.Option(
        ...,
        "--app",
        help="module:factory; factory(session_id=...) returns the Agent or a workflow.",
    ),
    since: str | None = typer.Option(
        None, "--since", help="Only calls made at or after this ISO time (local when no zone)."
    ),
    session: str | None = typer.Option(
        None, "--session", help="Only sessions whose id matches this glob (s-2025-*)."
    ),
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """Run the app agent's interventions and AGENT-HOOKS interceptors over every recorded tool
    call, without running any tool or model: which calls would it now deny, confirm or
    transform, against what happened then."""
    factory = load_factory(app_spec)
    moment = _since(since)
    try:
        agent = factory.build(CHECK_SESSION)
    except Exception as exc:  # the app's own code, or neither an Agent nor a workflow
        fail(f"cannot build the agent with {app_spec}: {type(exc).__name__}: {exc}")
    from tether.evals.policy_check import check_policy

    async def work(opened: Store) -> PolicyReport:
        return await check_policy(opened, agent, since=moment, session_glob=session)

    report = with_store(store, work, read_only=True)
    console = Console(highlight=False, soft_wrap=True)
    if as_json:
        console.out(json_line(report.to_dict()), highlight=False)
        return
    _print(console, report)


def _print(console: Console, report: PolicyReport) -> None:
    tools = Table(title="per tool: then -> now", title_justify="left")
    for name in ("tool", "calls", *_SHOWN, "changed"):
        tools.add_column(name, justify="left" if name == "tool" else "right")
    for tool, counts in sorted(report.tools.items()):
        then, now = counts.then, counts.now
        cells = [f"{then[v]} -> {now[v]}" if then[v] or now[v] else "" for v in _SHOWN]
        tools.add_row(safe(tool, one_line=True), str(counts.calls), *cells, str(counts.changed))
    console.print(tools)
    if report.rows:
        rows = Table(title="calls the policy judges", title_justify="left")
        for name in ("session", "call", "tool", "then", "now", "why now"):
            rows.add_column(name)
        for row in report.rows:
            was = safe(f"{row.then} ({row.status})", "dim" if not row.changed else "")
            why = row.reason
            if row.rewritten is not None:
                why = f"{why}: {_args(row.rewritten)}"
            rows.add_row(
                safe(row.session_id, one_line=True),
                safe(row.call_id, one_line=True),
                safe(row.tool, one_line=True),
                was,
                safe(row.now, _STYLE.get(row.now, "")),
                safe(why, one_line=True),
            )
        console.print(rows)
    for failure in report.failures:
        line = Text("unreadable session ", style="red") + safe(failure.session_id, one_line=True)
        console.print(line + Text(": ") + safe(failure.error, one_line=True))
    summary = (
        f"{report.calls} calls in {report.sessions} sessions checked in {report.seconds:.2f} s; "
        f"{report.changed} judged otherwise now"
    )
    if report.rows_left_off:
        summary += f"; {report.rows_left_off} more rows left out (see --json for the counts)"
    console.print(Text(summary))


def _args(arguments: dict[str, Any]) -> str:
    import json

    return json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
