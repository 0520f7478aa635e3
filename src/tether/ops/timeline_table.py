"""``tether sessions timeline`` in the terminal: one table row per timeline step, the
notes, then the tokens, cost and time split (the JSON is :func:`~tether.ops.timeline.timeline_of`'s)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tether.ops.cli_common import usd
from tether.ops.sessions_table import STATUS_STYLE
from tether.ops.terminal import safe
from tether.ops.transcript_view import CLIP


def print_timeline(session_id: str, shown: dict[str, Any]) -> None:
    """Print the timeline ``shown`` of session ``session_id``."""
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
            safe(step_line(step), one_line=True),
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


def step_line(step: dict[str, Any]) -> str:
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
    if step["kind"] == "node":
        return node_line(d)
    if step["kind"] == "interrupt":
        address = str(d.get("address") or d.get("name"))
        where = f"at {address}" if "/" in address else ""  # in a sub-agent: its address
        a = d.get("approval")
        if not a:
            return where
        said = a.get("label") or (
            f"approval {a['id']} pending"
            if a["status"] == "pending"
            else f"{a['status']} by {a['decided_by']}"  # skipped by alice
        )
        return said + (f": {a['note']}" if a["note"] else "") + (f" ({where})" if where else "")
    return ""


def node_line(d: dict[str, Any]) -> str:
    """A workflow node row's detail: kind, path, its session, the interrupts it holds."""
    line = f"{d['node_kind']} node {d['path']}"
    child = d.get("child_session")
    if child is not None:
        line += f"; session {child['session_id']} ({child['status']})"
    for asked in d.get("interrupts") or []:
        line += f"; {asked['status']}: {asked['address']}"
    return line[:CLIP]
