"""``tether sessions``: list, search, show and export the durable sessions in a store.

The commands are here; what they print is in :mod:`~tether.ops.sessions_table` (list),
:mod:`~tether.ops.search_view` (search),
:mod:`~tether.ops.transcript_view` (show) and :mod:`~tether.ops.timeline_table`
(timeline); the options and store plumbing every command shares in
:mod:`~tether.ops.cli_common`.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from tether.ops.cli_common import JSON as JSON
from tether.ops.cli_common import OUTPUT as OUTPUT
from tether.ops.cli_common import STORE as STORE
from tether.ops.cli_common import command_group, fail, with_store
from tether.ops.cli_common import usd as usd
from tether.ops.cli_common import when as when
from tether.ops.session_load import app_redactor, load_shown, no_session, unreadable
from tether.ops.sessions_table import STATUS_STYLE as STATUS_STYLE
from tether.ops.sessions_table import WIDE, sessions_table, stats_dict
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, json_text, safe
from tether.ops.timeline_table import print_timeline
from tether.ops.transcript_view import CLIP as CLIP
from tether.ops.transcript_view import ROLE_STYLE as ROLE_STYLE
from tether.ops.transcript_view import (
    header,
    interrupts_table,
    print_message,
    print_open_batch,
    session_dict,
)

_fail = fail  # the other commands' modules import these two from here
_with_store = with_store

FORMATS = ("jsonl", "json")

app = command_group("sessions", "List, show and export durable sessions.")
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
    page = with_store(
        store,
        lambda s: s.session_page(status=status, limit=limit),  # type: ignore[arg-type]
        read_only=True,
    )
    rows = page.sessions
    if as_json:
        for row in rows:
            typer.echo(json_line(stats_dict(row)))
        return
    console = Console(highlight=False)
    where = describe(store)
    if not rows:
        console.print(safe(f"no {status + ' ' if status else ''}sessions in {where}"))
        return
    console.print(sessions_table(rows, where, wide=console.width >= WIDE))
    if page.total > len(rows):
        console.print(
            Text(
                f"showing the newest {len(rows)}; pass --limit N for more ({page.total} in all)",
                style="dim",
            )
        )


@app.command()
def search(
    query: str = typer.Argument(..., help="Words to find (any of them; letters and digits)."),
    store: str = STORE,
    scope: str = typer.Option("*", "--scope", help="Only sessions whose id matches this glob."),
    limit: int = typer.Option(20, "--limit", min=1, max=50, help="Show at most this many."),
    as_json: bool = JSON,
) -> None:
    """Full-text search of the sessions' messages (user, assistant and tool text), best
    first, each hit a snippet redacted like ``show`` (a masked value is never found)."""
    from tether.governance.search import search_sessions
    from tether.ops.search_view import hits_table

    hits = with_store(
        store, lambda s: search_sessions(s, query, scope=scope, limit=limit), read_only=True
    )
    if as_json:
        for hit in hits:
            typer.echo(json_line(hit.json()))
        return
    console = Console(highlight=False)
    if not hits:
        console.print(safe(f"no session in {describe(store)} matches {query!r}", one_line=True))
        return
    console.print(hits_table(hits, describe(store), query))


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
    record, shown = load_shown(store, session_id, app_spec, unredacted)
    view = shown.view
    if as_json:
        ran = {cid: edit.json() for cid, edit in shown.edits.items()}
        typer.echo(json_line({**session_dict(record, view), "ran_with": ran}))
        return
    console = Console(highlight=False)
    console.print(header(record, view))
    if view.interrupts:
        console.print(interrupts_table(view, full))
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
        print_message(console, index, message, full, shown.edits)
    if view.pending is not None:
        print_open_batch(console, view, full)


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

    data = with_store(store, lambda s: read_timeline(s, session_id), read_only=True)
    if data is None:
        no_session(store, session_id)
    redactor = app_redactor(app_spec, session_id)
    try:
        shown = timeline_of(data, redactor)
    except (KeyError, ValueError, TypeError) as exc:
        unreadable(session_id, exc)
    if as_json:
        typer.echo(json_line(shown))
        return
    print_timeline(session_id, shown)


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
    shown = load_shown(store, session_id, app_spec, unredacted)[1]
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
        fail(f"cannot write {output}: {exc.strerror or exc}")
    err.print(safe(f"wrote {len(rows)} messages of session {session_id!r} to {output}"))
