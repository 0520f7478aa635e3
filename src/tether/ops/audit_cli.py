"""``tether audit verify|export|show``: the hash-chained audit log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.ops.sessions import OUTPUT, STORE, _fail, _with_store, when
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, json_text, safe

_HEAD = re.compile(r"([0-9]+):([0-9a-f]{64})")


def parse_head(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` as ``audit verify`` prints it -> (seq, hash); a typo is a usage error."""
    match = _HEAD.fullmatch(text.strip())
    if match is None or int(match.group(1)) < 1:
        raise typer.BadParameter(
            f"{text!r} is not a chain head: use SEQ:HASH as 'tether audit verify' prints it "
            "(a record number from 1, a colon, 64 lowercase hex digits)",
            param_hint="'--expect-head'",
        )
    return int(match.group(1)), match.group(2)


app = typer.Typer(
    name="audit",
    help="Verify, export and show the tamper-evident audit log.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,  # help texts are plain: "[server]" is not markup
)


@app.command()
def verify(
    store: str = STORE,
    expect_head: str | None = typer.Option(
        None,
        "--expect-head",
        help="SEQ:HASH recorded earlier (e.g. by a previous verify): also detects a rewritten chain.",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON object: ok, checked, head (SEQ:HASH), first_bad ({record, reason} or "
        "null), expected_head and problem (why --expect-head failed, or null). Exit code 1 "
        "when ok is false.",
    ),
) -> None:
    """Walk the chain; report the first broken link and exit 1 when it is broken."""
    want = None if expect_head is None else parse_head(expect_head)
    report = _with_store(store, lambda s: s.audit.verify(), read_only=True)
    seq, digest = report.head
    problem = None
    if report.ok and want is not None:
        want_seq, want_hash = want
        if want_seq > seq:
            problem = f"the chain has {seq} records but {want_seq} were recorded earlier: truncated"
        else:
            records = _with_store(
                store, lambda s: s.audit.records(after=want_seq - 1, limit=1), read_only=True
            )
            if not records or records[0].hash != want_hash:
                problem = (
                    f"record {want_seq} no longer has hash {want_hash}: the chain was rewritten"
                )
    if as_json:
        bad = report.first_bad
        typer.echo(
            json_line(
                {
                    "ok": report.ok and problem is None,
                    "store": describe(store),
                    "checked": report.checked,
                    "head": f"{seq}:{digest}",
                    "first_bad": None if bad is None else {"record": bad[0], "reason": bad[1]},
                    "expected_head": expect_head and expect_head.strip(),
                    "problem": problem,
                }
            )
        )
        if not report.ok or problem is not None:
            raise typer.Exit(1)
        return
    if not report.ok:
        assert report.first_bad is not None
        position, reason = report.first_bad
        err = Console(stderr=True, highlight=False)
        err.print(
            Text("audit log BROKEN ", style="bold red") + safe(f"at record {position}: {reason}")
        )
        err.print(f"{report.checked} record(s) before it verified", markup=False, style="dim")
        raise typer.Exit(1)
    if problem is not None:
        _fail(problem)
    Console(highlight=False).print(
        Text("audit log ok: ", style="bold green")
        + safe(f"{report.checked} record(s) in {describe(store)}; head {seq}:{digest}")
    )


@app.command()
def export(
    fmt: str = typer.Option("jsonl", "--format", "-f", help="jsonl (one record a line)."),
    store: str = STORE,
    output: Path | None = OUTPUT,
) -> None:
    """Export every record with its hashes (re-verifiable elsewhere)."""
    if fmt != "jsonl":
        raise typer.BadParameter(
            f"unknown format {fmt!r}; supported: jsonl", param_hint="'--format'"
        )
    rows = _with_store(store, lambda s: s.audit.export(), read_only=True)
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    if output is None:
        typer.echo(json_text(text), nl=False)  # same JSON, nothing a terminal would obey
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc.strerror or exc}")
    Console(stderr=True, highlight=False).print(
        safe(f"wrote {len(rows)} audit records to {output}")
    )


@app.command()
def show(
    session_id: str = typer.Argument(..., help="The session id."),
    store: str = STORE,
) -> None:
    """The audit records of one session, in chain order."""
    rows = _with_store(store, lambda s: s.audit.records(session_id=session_id), read_only=True)
    console = Console(highlight=False)
    if not rows:
        console.print(safe(f"no audit records for session {session_id!r} in {describe(store)}"))
        return
    table = Table(title=safe(f"audit of session {session_id}"), title_justify="left")
    for column in ("seq", "at", "event", "details"):
        table.add_column(column, overflow="fold", justify="right" if column == "seq" else "left")
    for r in rows:
        details = ", ".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v)}"
            for k, v in r.data.items()
            if v is not None
        )
        table.add_row(str(r.seq), when(r.at), safe(r.event, "bold"), safe(details))
    console.print(table)
