"""``tether approvals`` (list, show, approve, deny, respond, expire) and ``tether approvers``.

What they print is in :mod:`~tether.ops.approvals_view`, how a decision is recorded in
:mod:`~tether.ops.approvals_actions`, the approvers' commands in
:mod:`~tether.ops.approvers_cli`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from tether.ops.approvals_actions import decide, get_approval
from tether.ops.approvals_view import CLIP as CLIP
from tether.ops.approvals_view import STATUS_STYLE as STATUS_STYLE
from tether.ops.approvals_view import approval_grid, approvals_table
from tether.ops.approvers_cli import ROLE as ROLE
from tether.ops.approvers_cli import add_approver as add_approver
from tether.ops.approvers_cli import approvers_app as approvers_app
from tether.ops.approvers_cli import list_approvers as list_approvers
from tether.ops.approvers_cli import remove_approver as remove_approver
from tether.ops.cli_common import JSON, STORE, command_group, with_store
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, safe

if TYPE_CHECKING:
    from tether.durable import Approval, Store

app = command_group("approvals", "List and decide the approvals that suspended sessions wait for.")
AS = typer.Option(
    None, "--as", help="Approver name recorded with the decision (default: user@host)."
)
NOTE = typer.Option(None, "--note", "-n", help="A note kept with the decision.")
DECIDED_JSON = typer.Option(
    False,
    "--json",
    help="Print the decided approval as one JSON object, the keys of 'approvals show "
    "--json' (id, session_id, status, decision, decided_by, decided_at, note, edited_args, "
    "response, ...); errors stay on stderr with exit code 1.",
)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_age(text: str) -> float:
    """``90``, ``30s``, ``10m``, ``2h``, ``1d`` -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if match is None:
        raise typer.BadParameter(f"{text!r} is not an age; use e.g. 90, 30s, 10m, 2h or 1d")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


async def list_rows(
    s: Store,
    *,
    session: str | None = None,
    tool: str | None = None,
    older_than: float | None = None,
    show_all: bool = False,
    limit: int = 100,
) -> list[Approval]:
    """The rows ``approvals list`` shows: every filter is part of the store's query, so
    ``limit`` counts matching rows only."""
    if show_all:
        return await s.approvals.find(session_id=session, tool=tool, limit=limit)
    return await s.approvals.pending(session, tool, older_than, limit)


@app.command("list")
def list_approvals(
    store: str = STORE,
    session: str | None = typer.Option(None, "--session", help="Only this session."),
    tool: str | None = typer.Option(None, "--tool", help="Only approvals for this tool."),
    older_than: str | None = typer.Option(
        None, "--older-than", help="Only pending ones older than this: 10m, 2h."
    ),
    show_all: bool = typer.Option(False, "--all", help="Decided and expired ones too."),
    limit: int = typer.Option(100, "--limit", min=1, help="Show at most this many."),
    wide: bool = typer.Option(
        False, "--wide", help="Also the server, arguments (redacted), reason and expiry."
    ),
    as_json: bool = JSON,
) -> None:
    """Pending approvals across all sessions, oldest first (id, session, tool, age;
    --wide for the rest, or approvals show ID)."""
    if show_all and older_than is not None:
        raise typer.BadParameter(
            "--older-than filters pending approvals only; drop --all or --older-than",
            param_hint="'--older-than'",
        )
    age = None if older_than is None else parse_age(older_than)

    async def work(s: Store) -> list[Approval]:
        return await list_rows(
            s, session=session, tool=tool, older_than=age, show_all=show_all, limit=limit
        )

    from tether.governance.redaction import redact_approval

    rows = [redact_approval(a) for a in with_store(store, work, read_only=True)]
    if as_json:
        for a in rows:
            typer.echo(json_line(a.to_dict()))
        return
    console = Console(highlight=False)
    if not rows:
        console.print(safe(f"no {'' if show_all else 'pending '}approvals in {describe(store)}"))
        return
    console.print(approvals_table(rows, store, show_all=show_all, wide=wide))
    console.print(
        safe(
            f"decide with: tether approvals approve|deny ID [--note TEXT] --store {describe(store)}",
            "dim",
        ),
        soft_wrap=True,  # one line, to copy
    )


@app.command()
def show(
    approval_id: str = typer.Argument(..., help="The approval id."),
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """Show one approval: the request as approvers see it and, once decided, the decision."""
    from tether.governance.redaction import redact_approval

    a = redact_approval(
        with_store(store, lambda s: get_approval(s, approval_id, store), read_only=True)
    )
    if as_json:
        typer.echo(json_line(a.to_dict()))
        return
    Console(highlight=False).print(approval_grid(a))


def _parse_json(text: str, option: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise typer.BadParameter(f"not valid JSON: {exc}", param_hint=option) from None


@app.command()
def approve(
    approval_id: str = typer.Argument(..., help="The approval id."),
    edit: str | None = typer.Option(
        None,
        "--edit",
        help='Edited arguments, a JSON object merged over the real ones: {"n": 1}. Each '
        "value must have its parameter's JSON type (42 is not a string).",
    ),
    note: str | None = NOTE,
    who: str | None = AS,
    app_spec: str | None = typer.Option(
        None,
        "--app",
        help="module:factory building the Agent, to validate --edit against the tool "
        "(required with --edit; the current directory is importable).",
    ),
    store: str = STORE,
    as_json: bool = DECIDED_JSON,
) -> None:
    """Approve (optionally with edited arguments)."""
    edited = None if edit is None else _parse_json(edit, "'--edit'")
    if edited is not None and not isinstance(edited, dict):
        raise typer.BadParameter("edited arguments must be a JSON object", param_hint="'--edit'")
    if edited is not None and app_spec is None:
        raise typer.BadParameter(
            "edited arguments are checked against the tool before they are recorded: pass "
            "--app module:factory (the app's agent factory, as for tether serve and worker)",
            param_hint="'--edit'",
        )
    decide(store, approval_id, "approve", who, note, edited, app_spec=app_spec, as_json=as_json)


@app.command()
def deny(
    approval_id: str = typer.Argument(..., help="The approval id."),
    note: str | None = NOTE,
    who: str | None = AS,
    store: str = STORE,
    as_json: bool = DECIDED_JSON,
) -> None:
    """Deny (the note is the reason the model sees)."""
    decide(store, approval_id, "deny", who, note, as_json=as_json)


@app.command()
def respond(
    approval_id: str = typer.Argument(..., help="The approval id."),
    response: str = typer.Argument(..., help='A JSON answer, e.g. {"skip": "done by hand"}.'),
    note: str | None = NOTE,
    who: str | None = AS,
    store: str = STORE,
    as_json: bool = DECIDED_JSON,
) -> None:
    """Answer with a free JSON response (what the interrupt's code receives)."""
    answer = _parse_json(response, "RESPONSE")
    decide(store, approval_id, "respond", who, note, response=answer, as_json=as_json)


@app.command()
def expire(store: str = STORE) -> None:
    """Resolve every overdue approval by its expiry action (deny unless set to approve)."""
    done = with_store(store, lambda s: s.approvals.expire_due())
    console = Console(highlight=False)
    for a in done:
        console.print(safe(f"expired {a.id} ({a.session_id}): {a.on_expiry}"))
    console.print(f"{len(done)} approval(s) expired", markup=False)
