"""``tether sessions``: list, show and export the durable sessions in a store."""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.padding import Padding
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from tether.errors import TetherError
from tether.ops.store_url import DEFAULT_STORE, describe, open_store
from tether.ops.terminal import json_line, json_text, safe

if TYPE_CHECKING:
    from tether.durable import Approval, SessionRecord, SessionSummary, Store
    from tether.durable.approvals import Redactor
    from tether.durable.session_list import SessionStats
    from tether.governance.redaction import EditedCall, ShownSession
    from tether.messages import ContentBlock, Message
    from tether.session import SessionView

T = TypeVar("T")
CLIP = 500
"""Characters of one text block, tool argument list or tool result shown without --full."""
FORMATS = ("jsonl", "json")
STATUS_STYLE = {
    "idle": "blue",
    "running": "yellow",
    "suspended": "bold magenta",
    "ready": "bold cyan",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "dim",
}
ROLE_STYLE = {
    "system": "bold yellow",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold magenta",
}

app = typer.Typer(
    name="sessions",
    help="List, show and export durable sessions.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts are plain: "[server]" is not markup
)
STORE = typer.Option(
    DEFAULT_STORE,
    "--store",
    "-s",
    envvar="TETHER_STORE",
    help="SQLite path (or sqlite:///PATH) or postgresql:// URL.",
)

OUTPUT = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout.")
JSON = typer.Option(False, "--json", help="Machine-readable: one JSON object per line.")
APP = typer.Option(
    None,
    "--app",
    help="module:factory building the session's Agent: its ApprovalPolicy redactor is applied "
    "too (the default secret mask always is).",
)
UNREDACTED = typer.Option(
    False,
    "--unredacted",
    help="Show real argument values, secrets included (admins: whoever can open the store "
    "can read the journal anyway; this asks for it explicitly).",
)


def _fail(message: str, hint: str | None = None) -> NoReturn:
    err = Console(stderr=True, highlight=False)
    err.print(Text("error: ", style="bold red") + safe(message))
    if hint:
        err.print(safe(hint, "dim"))
    raise typer.Exit(1)


def _with_store(
    url: str,
    work: Callable[[Store], Awaitable[T]],
    *,
    create: bool = False,
    read_only: bool = False,
) -> T:
    """Open the store, run ``work`` on it, close it; a TetherError exits 1 without a traceback.
    ``create``: a missing SQLite file is created; ``read_only``: the command only reads,
    and writes nothing to the store (see open_store)."""

    async def go() -> T:
        store = open_store(url, create=create, read_only=read_only)
        try:
            return await work(store)
        finally:
            await store.close()

    try:
        return asyncio.run(go())
    except TetherError as exc:
        _fail(str(exc))


def _app_redactor(app_spec: str | None, session_id: str) -> Redactor | None:
    """The custom redactor of the session's Agent, built by ``--app`` (None without it)."""
    if app_spec is None:
        return None
    from tether.governance.redaction import redactor_of
    from tether.ops.worker_cli import load_factory

    try:
        return redactor_of(load_factory(app_spec)(session_id=session_id))
    except typer.BadParameter:
        raise
    except Exception as exc:
        _fail(f"cannot build the agent from {app_spec}: {type(exc).__name__}: {exc}")


def _load(
    url: str, session_id: str, app_spec: str | None = None, unredacted: bool = False
) -> tuple[SessionRecord, ShownSession]:
    """The session as people see it: through :func:`~tether.governance.redaction.show_session`
    (the redactor of ``app_spec``'s Agent when given; ``unredacted`` shows real values)."""
    from tether.governance.redaction import show_session, tree_masks
    from tether.governance.redaction_tree import tree_sessions
    from tether.session import fold

    async def read(store: Store) -> tuple[SessionRecord | None, list[Approval], list[Any]]:
        record = await store.load(session_id)
        if record is None:
            return None, [], []
        approvals = await store.approvals.find(session_id=session_id, limit=10_000)
        return record, approvals, await tree_sessions(store, session_id)  # its agent tree

    record, approvals, tree = _with_store(url, read, read_only=True)
    if record is None:
        _fail(
            f"no session {session_id!r} in {describe(url)}",
            f"list the sessions with: tether sessions list --store {describe(url)}",
        )
    try:
        view = fold(record)
    except (KeyError, ValueError, TypeError) as exc:
        _fail(f"session {session_id!r} has a journal entry tether cannot read ({exc!r})")
    redactor = _app_redactor(app_spec, session_id)
    if unredacted:
        Console(stderr=True, highlight=False).print(
            f"warning: session {session_id!r} shown UNREDACTED (--unredacted): real argument "
            "values, secrets included",
            markup=False,
            style="bold yellow",
        )
    masks = tree_masks(tree, redactor)
    return record, show_session(
        record, view, approvals, redactor=redactor, unredacted=unredacted, tree=masks
    )


def when(at: float, now: float | None = None) -> str:
    """Local time and age: ``2025-03-01 14:02:11 (5m ago)``."""
    seconds = (time.time() if now is None else now) - at
    if seconds < 1:
        age = "just now"
    else:
        for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
            if seconds >= size:
                age = f"{int(seconds // size)}{unit} ago"
                break
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(at))} ({age})"


def _status(status: str) -> Text:
    return safe(status, STATUS_STYLE.get(status, ""))


def _summary_dict(row: SessionSummary | SessionRecord | SessionStats) -> dict[str, Any]:
    """A session's id, status, version and times (in ``list`` and ``show --json``)."""
    return {
        "session_id": row.session_id,
        "status": row.status,
        "version": row.version,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def _session_dict(record: SessionRecord, view: SessionView) -> dict[str, Any]:
    """``sessions show --json``: what the text view shows, as one JSON object."""
    from tether.messages import _block_to_dict

    lease = record.lease
    held = lease is not None and lease.expires_at > time.time()
    open_batch = None
    if view.pending is not None:
        calls, results = view.pending
        open_batch = [
            {
                "call": _block_to_dict(call),
                "result": None if result is None else _block_to_dict(result),
                "in_doubt": result is None and call.id in view.intents,
            }
            for call, result in zip(calls, results, strict=True)
        ]
    return {
        **_summary_dict(record),
        "lease_holder": lease.holder if held and lease is not None else None,
        "lease_expires_at": lease.expires_at if held and lease is not None else None,
        "state_keys": sorted(view.state),
        "interrupts": [i.to_dict() for i in view.interrupts],
        "messages": [m.to_dict() for m in view.messages],
        "open_batch": open_batch,
    }


@app.command("list")
def list_sessions(
    store: str = STORE,
    status: str | None = typer.Option(None, "--status", help="Only sessions with this status."),
    limit: int = typer.Option(50, "--limit", min=1, help="Show at most this many."),
    as_json: bool = JSON,
) -> None:
    """List sessions, most recently updated first: the first prompt (redacted, shortened),
    model and tool calls, tokens and pending approvals, as the web page's list."""
    from tether.durable import SESSION_STATUSES

    if status is not None and status not in SESSION_STATUSES:
        known = ", ".join(sorted(SESSION_STATUSES))
        raise typer.BadParameter(f"unknown status {status!r}; choose one of {known}")
    page = _with_store(
        store,
        lambda s: s.session_page(status=status, limit=limit),  # type: ignore[arg-type]
        read_only=True,
    )
    rows = page.sessions
    if as_json:
        for row in rows:
            typer.echo(json_line(_stats_dict(row)))
        return
    console = Console(highlight=False)
    where = describe(store)
    if not rows:
        console.print(safe(f"no {status + ' ' if status else ''}sessions in {where}"))
        return
    console.print(_sessions_table(rows, where, wide=console.width >= WIDE))
    if page.total > len(rows):
        console.print(
            Text(
                f"showing the newest {len(rows)}; pass --limit N for more ({page.total} in all)",
                style="dim",
            )
        )


def usd(cost: object) -> str:
    """A cost (a Decimal or its string) as ``$0.0123``; ``-`` when unknown."""
    if cost is None:
        return "-"
    from decimal import Decimal

    amount = Decimal(str(cost))
    return f"${amount:.4f}" if amount >= Decimal("0.0001") or not amount else f"${amount:.2e}"


WIDE = 140
"""Terminal columns from which ``sessions list`` adds entries, model and tool calls and
the update time (below: session, status, first prompt, tokens, pending)."""


def _sessions_table(rows: list[SessionStats], where: str, *, wide: bool) -> Table:
    table = Table(title=safe(f"sessions in {where}"), title_justify="left")
    # ids never wrap (they are copied into the next command); the prompt gives way
    longest = max(len(r.session_id) for r in rows)
    table.add_column("session", no_wrap=True, min_width=min(longest, 64))
    table.add_column("status", no_wrap=True)
    if wide:
        table.add_column("entries", justify="right")
    table.add_column("first prompt", no_wrap=True, overflow="ellipsis", ratio=1, min_width=12)
    counts = (
        ("model calls", "tool calls", "tokens", "cost", "pending")
        if wide
        else ("tokens", "cost", "pending")
    )
    for name in counts:
        table.add_column(name, justify="right", no_wrap=True)
    if wide:
        table.add_column("updated", no_wrap=True)
    now = time.time()
    for row in rows:
        prompt = (
            Text("-", style="dim")
            if row.first_prompt is None
            else safe(row.first_prompt, one_line=True)
        )
        pending = (
            Text(str(row.pending_approvals), style="bold magenta")
            if row.pending_approvals
            else Text("-", style="dim")
        )
        cells: list[Text | str] = [safe(row.session_id, "bold", one_line=True), _status(row.status)]
        if wide:
            cells += [str(row.version), prompt, str(row.model_calls), str(row.tool_calls)]
        else:
            cells.append(prompt)
        cells += [f"{row.total_tokens:,}", usd(row.cost), pending]
        if wide:
            cells.append(when(row.updated_at, now))
        table.add_row(*cells)
    return table


def _stats_dict(row: SessionStats) -> dict[str, Any]:
    """One ``sessions list --json`` line: the session and its counts."""
    return {
        **_summary_dict(row),
        "first_prompt": row.first_prompt,
        "model_calls": row.model_calls,
        "tool_calls": row.tool_calls,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "total_tokens": row.total_tokens,
        "cost": None if row.cost is None else str(row.cost),
        "pending_approvals": row.pending_approvals,
    }


@app.command()
def show(
    session_id: str = typer.Argument(..., help="The session id."),
    store: str = STORE,
    full: bool = typer.Option(False, "--full", help="Do not truncate long contents."),
    as_json: bool = JSON,
    app_spec: str | None = APP,
    unredacted: bool = UNREDACTED,
) -> None:
    """Show a session: status, pending interrupts and the transcript (redacted like approvals;
    a call that ran with edited arguments shows them and who edited)."""
    record, shown = _load(store, session_id, app_spec, unredacted)
    view = shown.view
    if as_json:
        ran = {cid: edit.json() for cid, edit in shown.edits.items()}
        typer.echo(json_line({**_session_dict(record, view), "ran_with": ran}))
        return
    console = Console(highlight=False)
    console.print(_header(record, view))
    if view.interrupts:
        console.print(_interrupts(view, full))
        console.print(
            safe(
                "answer them with: tether approvals list --session "
                f"{shlex.quote(session_id)} --store {shlex.quote(describe(store))} (then "
                "tether approvals approve|deny ID; a worker resumes the session)",
                "dim",
                one_line=True,
            ),
            soft_wrap=True,  # one line, to copy
        )
    console.print(Rule(f"transcript ({len(view.messages)} messages)", style="dim"))
    for index, message in enumerate(view.messages, start=1):
        _print_message(console, index, message, full, shown.edits)
    if view.pending is not None:
        _print_open_batch(console, view, full)


def _header(record: SessionRecord, view: SessionView) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("session", safe(record.session_id, one_line=True))
    grid.add_row("status", _status(record.status))
    grid.add_row("entries", str(record.version))
    grid.add_row("created", when(record.created_at))
    grid.add_row("updated", when(record.updated_at))
    lease = record.lease
    if lease is not None and lease.expires_at > time.time():
        grid.add_row("lease", safe(f"held by {lease.holder} until {when(lease.expires_at)}"))
    if view.state:
        grid.add_row("state", safe(", ".join(sorted(view.state))))
    return grid


def _interrupts(view: SessionView, full: bool) -> Table:
    table = Table(title="pending interrupts", title_justify="left")
    for name in ("id", "name", "source", "reason", "tool call"):
        table.add_column(name, overflow="fold")
    for item in view.interrupts:
        reason = item.reason if isinstance(item.reason, str) else json.dumps(item.reason)
        call = item.tool_call
        table.add_row(
            safe(item.id, "bold"),
            safe(item.name),
            safe(item.source),
            _clip(reason, full),
            Text("-")
            if call is None
            else _clip(f"{call.name}({json.dumps(call.arguments)})", full) + safe(f"\n{call.id}"),
        )
    return table


def _clip(text: str, full: bool, style: str = "") -> Text:
    if full or len(text) <= CLIP:
        return safe(text, style)
    note = f" … [{len(text) - CLIP} more characters; --full shows all]"
    return safe(text[:CLIP], style) + Text(note, style="dim italic")


def _print_message(
    console: Console,
    index: int,
    message: Message,
    full: bool,
    edits: dict[str, EditedCall] | None = None,
) -> None:
    head = Text(f"{index:>3} ", style="dim") + Text(message.role, style=ROLE_STYLE[message.role])
    if message.usage is not None:
        usage = message.usage
        head += Text(f"  {usage.input_tokens} in / {usage.output_tokens} out tokens", style="dim")
        if usage.cost is not None:
            head += Text(f", {usd(usage.cost)}", style="dim")
    console.print(head)
    for block in message.content:
        console.print(Padding(_block(block, full), (0, 0, 0, 6)))
        edit = (edits or {}).get(block.id) if block.type == "tool_call" else None
        if edit is not None:
            console.print(Padding(_edited(edit, full), (0, 0, 0, 8)))


def _edited(edit: EditedCall, full: bool) -> Text:
    """The arguments a call ran with when they were not the model's, and who changed them
    (a human's edit, a policy's Transform)."""
    at = f" at {when(edit.decided_at)}" if edit.decided_at else ""
    args = _clip(json.dumps(edit.arguments, ensure_ascii=False), full)
    if edit.by == ("edit",):
        who = edit.decided_by or "a resume answer"
        return Text.assemble(
            ("ran with edited arguments ", "bold yellow"), f"(by {who}{at}): ", args
        )
    return Text.assemble(("ran with ", "bold yellow"), args, safe(f" ({edit.label}{at})"))


def _block(block: ContentBlock, full: bool) -> Text:
    from tether.messages import ReasoningBlock, TextBlock, ToolCall

    if isinstance(block, TextBlock):
        return _clip(block.text, full)
    if isinstance(block, ReasoningBlock):
        if block.redacted:
            return Text("(redacted reasoning)", style="dim italic")
        return Text("reasoning: ", style="dim italic") + _clip(block.text, full, "dim italic")
    if isinstance(block, ToolCall):
        args = _clip(json.dumps(block.arguments, ensure_ascii=False), full)
        call = Text.assemble(("→ ", "cyan"), safe(block.name, "bold"), "(", args, ")")
        return call + safe(f"  {block.id}", "dim")
    style = "red" if block.is_error else "green"
    head = Text("← ", style=style) + safe(block.name, "bold")
    head += safe(f" [{block.status}]", style) + safe(f"  {block.tool_call_id}", "dim")
    inline = len(block.content) <= 60 and "\n" not in block.content
    return head + (": " if inline else "\n") + _clip(block.content, full)


def _print_open_batch(console: Console, view: SessionView, full: bool) -> None:
    assert view.pending is not None
    calls, results = view.pending
    waiting = {i.tool_call.id: i.id for i in view.interrupts if i.tool_call is not None}
    console.print(Rule("open tool batch (results so far)", style="dim"))
    for call, result in zip(calls, results, strict=True):
        if result is not None:
            line = _block(result, full)
        elif call.id in waiting:
            line = safe(f"… {call.name}  {call.id}: waiting for interrupt {waiting[call.id]}")
        elif call.id in view.intents:
            line = safe(f"? {call.name}  {call.id}: started, no result (in doubt)", "yellow")
        else:
            line = safe(f"· {call.name}  {call.id}: not run yet", "dim")
        console.print(Padding(line, (0, 0, 0, 6)))


@app.command()
def timeline(
    session_id: str = typer.Argument(..., help="The session id."),
    store: str = STORE,
    as_json: bool = JSON,
    app_spec: str | None = APP,
) -> None:
    """Show a session's steps in order: runs and resumes, model calls (tokens), tool calls
    (status, edited arguments), verdicts, interrupts and who answered them, waits; the
    same data as the web page's timeline (GET /api/timeline/ID), redacted the same way."""
    from tether.ops.timeline import read_timeline, timeline_of

    data = _with_store(store, lambda s: read_timeline(s, session_id), read_only=True)
    if data is None:
        _fail(
            f"no session {session_id!r} in {describe(store)}",
            f"list the sessions with: tether sessions list --store {describe(store)}",
        )
    redactor = _app_redactor(app_spec, session_id)
    try:
        shown = timeline_of(data, redactor)
    except (KeyError, ValueError, TypeError) as exc:
        _fail(f"session {session_id!r} has a journal entry tether cannot read ({exc!r})")
    if as_json:
        typer.echo(json_line(shown))
        return
    title = safe(f"session {session_id} ({shown['status']})", one_line=True)
    table = Table(title=title, title_justify="left")
    for column in ("#", "at", "step", "status", "duration", "detail"):
        table.add_column(column, overflow="fold")
    for step in shown["steps"]:
        style = "bold red" if step["failed"] else STATUS_STYLE.get(step["status"], "")
        table.add_row(
            str(step["index"] + 1),
            f"+{step['start'] - shown['start']:.3f}s",
            safe(("  " * step["depth"] + "↳ " if step["depth"] else "") + step["title"]),
            safe(step["status"], style),
            f"{step['duration']:.3f}s",
            safe(_step_line(step), one_line=True),
        )
    console = Console(highlight=False)
    console.print(table)
    for note in shown["notes"]:
        console.print(safe(note, "yellow"))
    split = shown["time_split"]
    console.print(
        Text(
            f"tokens {shown['usage']['total_tokens']} in {len(shown['usage']['calls'])} model "
            f"calls; cost {usd(shown['usage']['cost'])}; time: model {split['model']:.3f}s, tools {split['tools']:.3f}s, waiting "
            f"for humans {split['waiting']:.3f}s, tether {split['tether']:.3f}s",
            style="dim",
        )
    )


def _step_line(step: dict[str, Any]) -> str:
    """The one-line detail of a timeline row in the terminal."""
    d = step["detail"]
    if step["kind"] == "model":
        line = f"{d['input_tokens']} in / {d['output_tokens']} out"
        if d.get("cost") is not None:
            line += f", {usd(d['cost'])}"
        if d.get("attempts", 1) > 1:
            reasons = [r.get("reason") for r in d["retries"] + d["fallbacks"]]
            line += f"; {d['attempts']} attempts ({', '.join(map(str, reasons))})"
        return line + (f"; model {d['model']}" if d.get("model") else "")
    if step["kind"] == "compaction":
        return (
            f"{d['manager'] or 'manager?'}: messages {d['messages'][0]}..{d['messages'][1]} "
            f"-> {d['summary']}"
        )
    if step["kind"] == "tool":
        ran = d.get("edited")
        line = json.dumps(d.get("arguments"), ensure_ascii=False)
        if ran is not None:
            by = f"by {ran.get('decided_by') or 'a resume answer'}"
            if ran.get("by", ["edit"]) != ["edit"]:
                by = ran["label"]  # a policy's Transform (and maybe an edit)
            line += f" -> ran with {json.dumps(ran['arguments'], ensure_ascii=False)} ({by})"
        child = d.get("child_session")
        if child is not None:
            line = f"child {child['session_id']} ({child['status']}) " + line
        return line[:CLIP]
    if step["kind"] == "interrupt" and d.get("approval"):
        a = d["approval"]
        said = a.get("label") or f"{a['status']} by {a['decided_by']}"  # skipped by alice
        return said + (f": {a['note']}" if a["note"] else "")
    return ""


@app.command()
def export(
    session_id: str = typer.Argument(..., help="The session id."),
    fmt: str = typer.Option("jsonl", "--format", "-f", help="jsonl (one message a line) or json."),
    store: str = STORE,
    output: Path | None = OUTPUT,
    include_reasoning: bool = typer.Option(
        False, "--include-reasoning", help="Add each assistant turn's reasoning."
    ),
    system: str | None = typer.Option(None, "--system", help="Prepend this system message."),
    app_spec: str | None = APP,
    unredacted: bool = UNREDACTED,
) -> None:
    """Export a session as OpenAI-style chat messages (evaluation / training data), redacted
    like every view of it unless --unredacted."""
    from tether.ops.export import to_openai_messages

    if fmt not in FORMATS:
        raise typer.BadParameter(
            f"unknown format {fmt!r}; supported: {', '.join(FORMATS)}", param_hint="'--format'"
        )
    shown = _load(store, session_id, app_spec, unredacted)[1]
    view = shown.view
    rows = to_openai_messages(
        view.messages, include_reasoning=include_reasoning, system=system, ran=shown.edits
    )
    if fmt == "json":
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    else:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    err = Console(stderr=True, highlight=False)
    if view.pending is not None:
        err.print(
            safe(
                f"note: session {session_id!r} stopped inside a tool batch; the last assistant "
                "message's tool calls have no results in this export",
                "yellow",
            )
        )
    if output is None:
        typer.echo(json_text(text), nl=False)  # same JSON, nothing a terminal would obey
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")
    err.print(safe(f"wrote {len(rows)} messages of session {session_id!r} to {output}"))
