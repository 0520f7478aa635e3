"""``tether approvals`` (list, show, approve, deny, respond, expire) and ``tether approvers``."""

from __future__ import annotations

import getpass
import json
import re
import socket
import time
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.durable.approval_types import ApprovalNotFound
from tether.ops.app_loader import build_agent
from tether.ops.decision_trace import trace_decided
from tether.ops.roles import VALID_ROLES, role_problem
from tether.ops.sessions import JSON, STORE, _fail, _with_store, when
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, safe

if TYPE_CHECKING:
    from tether.durable import Approval, Store

app = typer.Typer(
    name="approvals",
    help="List and decide the approvals that suspended sessions wait for.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts are plain: "[server]" is not markup
)
approvers_app = typer.Typer(
    name="approvers",
    help="Manage approvers and their bearer tokens (stored hashed).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts are plain: "[server]" is not markup
)
CLIP = 200
STATUS_STYLE = {"pending": "bold magenta", "approved": "green", "denied": "red", "expired": "dim"}
AS = typer.Option(
    None, "--as", help="Approver name recorded with the decision (default: user@host)."
)
NOTE = typer.Option(None, "--note", "-n", help="A note kept with the decision.")
ROLE = typer.Option(
    ...,
    "--role",
    "-r",
    help="A role (repeat for several): approve:PATTERN, viewer, auditor or admin.",
)
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


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _expires(approval: Approval, now: float) -> Text:
    if approval.expires_at is None:
        return Text("never", style="dim")
    left = approval.expires_at - now
    if left <= 0:
        return Text("overdue (", style="bold red") + safe(approval.on_expiry) + Text(")")
    return Text(f"in {_age(left)} (") + safe(approval.on_expiry) + Text(")")


def _json(value: Any, full: bool = False) -> Text:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return safe(text if full or len(text) <= CLIP else text[:CLIP] + " …")


def _status(status: str) -> Text:
    return safe(status, STATUS_STYLE.get(status, ""))


async def _get(s: Store, approval_id: str, store: str) -> Approval:
    """``s.approvals.get`` whose not-found error keeps ``--store`` in its hint."""
    try:
        return await s.approvals.get(approval_id)
    except ApprovalNotFound:
        _fail(
            f"no approval {approval_id!r} in {describe(store)}",
            f"list them with: tether approvals list --all --store {describe(store)}",
        )


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

    rows = [redact_approval(a) for a in _with_store(store, work, read_only=True)]
    if as_json:
        for a in rows:
            typer.echo(json_line(a.to_dict()))
        return
    console = Console(highlight=False)
    if not rows:
        console.print(safe(f"no {'' if show_all else 'pending '}approvals in {describe(store)}"))
        return
    console.print(_table(rows, store, show_all=show_all, wide=wide))
    console.print(
        safe(
            f"decide with: tether approvals approve|deny ID [--note TEXT] --store {describe(store)}",
            "dim",
        ),
        soft_wrap=True,  # one line, to copy
    )


def _table(rows: list[Approval], store: str, *, show_all: bool, wide: bool) -> Table:
    table = Table(title=safe(f"approvals in {describe(store)}"), title_justify="left")
    # ids never wrap (they are copied into the next command); the text columns give way
    table.add_column("approval", no_wrap=True, min_width=len(rows[0].id))
    table.add_column("session", no_wrap=True)
    table.add_column("tool", overflow="fold")
    if wide:
        for name in ("server", "arguments (redacted)", "reason"):
            table.add_column(name, overflow="fold")
    table.add_column("age", no_wrap=True)
    if wide:
        table.add_column("expires", overflow="fold")
    if show_all:
        table.add_column("status", no_wrap=True)
    now = time.time()
    for a in rows:
        cells = [
            safe(a.id, "bold", one_line=True),
            safe(a.session_id, one_line=True),
            safe(a.tool or f"({a.source})"),
        ]
        if wide:
            cells += [safe(a.server or "-"), _json(a.arguments), _json(a.reason)]
        cells.append(Text(_age(now - a.requested_at)))
        if wide:
            cells.append(_expires(a, now) if a.status == "pending" else Text("-", style="dim"))
        table.add_row(*cells, *([_status(a.status)] if show_all else []))
    return table


@app.command()
def show(
    approval_id: str = typer.Argument(..., help="The approval id."),
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """Show one approval: the request as approvers see it and, once decided, the decision."""
    from tether.governance.redaction import redact_approval

    a = redact_approval(_with_store(store, lambda s: _get(s, approval_id, store), read_only=True))
    if as_json:
        typer.echo(json_line(a.to_dict()))
        return
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    now = time.time()
    rows: list[tuple[str, Text | str]] = [
        ("approval", safe(a.id, one_line=True)),
        ("status", _status(a.status)),
        ("session", safe(a.session_id, one_line=True)),
        ("interrupt", safe(f"{a.interrupt_id} ({a.source}: {a.name})")),
        ("tool", safe(a.tool or "-")),
        ("server", safe(a.server or "-")),
        ("arguments", _json(a.arguments, full=True)),
        ("args sha256", safe(a.args_sha256 or "-")),
        ("reason", _json(a.reason, full=True)),
        ("requested", when(a.requested_at, now)),
        ("expires", _expires(a, now) if a.status == "pending" else Text("-")),
    ]
    if a.status != "pending":
        rows += [("decision", safe(a.decision or "-")), ("decided by", safe(a.decided_by or "-"))]
        rows.append(("decided", when(a.decided_at, now) if a.decided_at else "-"))
        if a.edited_args is not None:
            rows.append(("edited args", _json(a.edited_args, full=True)))
        if a.response is not None:
            rows.append(("response", _json(a.response, full=True)))
        rows.append(("note", safe(a.note or "-")))
    for key, value in rows:
        grid.add_row(key, value)
    Console(highlight=False).print(grid)


def _who(name: str | None) -> str:
    if name:
        return name
    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def _decide(
    store: str,
    approval_id: str,
    decision: str,
    who: str | None,
    note: str | None,
    edited: dict[str, Any] | None = None,
    response: Any = None,
    app_spec: str | None = None,
    as_json: bool = False,
) -> None:
    async def work(s: Store) -> Approval:
        current = await _get(s, approval_id, store)
        validate = None
        if edited is not None and app_spec is not None:
            validate = build_agent(app_spec, current.session_id)
        started = time.time_ns()
        from tether.governance import decide_approval

        decided = await decide_approval(
            s,
            approval_id,
            decision,  # type: ignore[arg-type]
            decided_by=_who(who),
            note=note,
            edited_args=edited,
            response=response,
            agent=validate,
        )
        await trace_decided(s, decided, via="cli", started_ns=started)
        return decided

    try:
        a = _with_store(store, work)
    except ValueError as exc:
        _fail(str(exc))
    if as_json:
        from tether.governance.redaction import redact_approval

        typer.echo(json_line(redact_approval(a).to_dict()))
        return
    verb = {"approve": "approved", "deny": "denied", "respond": "answered"}[decision]
    extra = " with edited arguments" if edited is not None else ""
    Console(highlight=False).print(
        safe(
            f"{verb} {a.id}{extra} as {a.decided_by}; session {a.session_id} resumes when "
            "nothing else of it is pending (worker, or answers_for + agent.resume)"
        )
    )


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
    _decide(store, approval_id, "approve", who, note, edited, app_spec=app_spec, as_json=as_json)


@app.command()
def deny(
    approval_id: str = typer.Argument(..., help="The approval id."),
    note: str | None = NOTE,
    who: str | None = AS,
    store: str = STORE,
    as_json: bool = DECIDED_JSON,
) -> None:
    """Deny (the note is the reason the model sees)."""
    _decide(store, approval_id, "deny", who, note, as_json=as_json)


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
    _decide(store, approval_id, "respond", who, note, response=answer, as_json=as_json)


@app.command()
def expire(store: str = STORE) -> None:
    """Resolve every overdue approval by its expiry action (deny unless set to approve)."""
    done = _with_store(store, lambda s: s.approvals.expire_due())
    console = Console(highlight=False)
    for a in done:
        console.print(safe(f"expired {a.id} ({a.session_id}): {a.on_expiry}"))
    console.print(f"{len(done)} approval(s) expired", markup=False)


@approvers_app.command("add")
def add_approver(
    name: str = typer.Argument(..., help="The approver's name (recorded with decisions)."),
    role: list[str] = ROLE,
    store: str = STORE,
    custom_role: bool = typer.Option(
        False,
        "--custom-role",
        help="Accept roles the default policy does not know (for create_app(policy=...)).",
    ),
) -> None:
    """Add an approver and print their bearer token ONCE (only its hash is stored).

    Creates the store when it does not exist yet.
    """
    problems = [] if custom_role else [p for p in map(role_problem, role) if p is not None]
    if problems:
        raise typer.BadParameter(
            "; ".join(problems) + f". Valid roles: {VALID_ROLES} (or pass --custom-role)",
            param_hint="'--role'",
        )
    try:
        issued = _with_store(store, lambda s: s.approvers.add(name, role), create=True)
    except ValueError as exc:
        _fail(str(exc))
    console = Console(highlight=False)
    console.print(safe(f"approver {name!r} added with role(s) {', '.join(issued.approver.roles)}"))
    console.print("bearer token (shown once, not stored; keep it secret):", markup=False)
    typer.echo(issued.token)


@approvers_app.command("list")
def list_approvers(store: str = STORE) -> None:
    """List approvers (names, roles, key ids; never tokens)."""
    rows = _with_store(store, lambda s: s.approvers.all(), read_only=True)
    table = Table(title=safe(f"approvers in {describe(store)}"), title_justify="left")
    for column in ("name", "roles", "key id", "added"):
        table.add_column(column)
    for a in rows:
        table.add_row(safe(a.name), safe(", ".join(a.roles)), safe(a.key_id), when(a.created_at))
    Console(highlight=False).print(table)


@approvers_app.command("remove")
def remove_approver(name: str = typer.Argument(...), store: str = STORE) -> None:
    """Remove an approver: their token stops working at once."""
    if not _with_store(store, lambda s: s.approvers.remove(name)):
        _fail(f"no approver named {name!r} in {describe(store)}")
    Console(highlight=False).print(safe(f"removed approver {name!r}"))
