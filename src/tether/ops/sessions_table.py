"""``tether sessions list``: the table of sessions and its ``--json`` rows."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from tether.ops.cli_common import usd, when
from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.durable import SessionRecord, SessionSummary
    from tether.durable.session_list import SessionStats

STATUS_STYLE = {
    "idle": "blue",
    "running": "yellow",
    "suspended": "bold magenta",
    "ready": "bold cyan",
    "completed": "green",
    "failed": "bold red",
    "cancelled": "dim",
}

WIDE = 140
"""Terminal columns from which ``sessions list`` adds entries, model and tool calls and
the update time (below: session, status, first prompt, tokens, pending)."""


def status_text(status: str) -> Text:
    """A session status, coloured by :data:`STATUS_STYLE`."""
    return safe(status, STATUS_STYLE.get(status, ""))


def summary_dict(row: SessionSummary | SessionRecord | SessionStats) -> dict[str, Any]:
    """A session's id, status, version and times (in ``list`` and ``show --json``)."""
    return {
        "session_id": row.session_id,
        "status": row.status,
        "version": row.version,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }


def sessions_table(rows: list[SessionStats], where: str, *, wide: bool) -> Table:
    """The ``sessions list`` table (``wide``: the columns from :data:`WIDE` on too)."""
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
        cells: list[Text | str] = [
            safe(row.session_id, "bold", one_line=True),
            status_text(row.status),
        ]
        if wide:
            cells += [str(row.version), prompt, str(row.model_calls), str(row.tool_calls)]
        else:
            cells.append(prompt)
        cells += [f"{row.total_tokens:,}", usd(row.cost), pending]
        if wide:
            cells.append(when(row.updated_at, now))
        table.add_row(*cells)
    return table


def stats_dict(row: SessionStats) -> dict[str, Any]:
    """One ``sessions list --json`` line: the session and its counts."""
    return {
        **summary_dict(row),
        "first_prompt": row.first_prompt,
        "model_calls": row.model_calls,
        "tool_calls": row.tool_calls,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "total_tokens": row.total_tokens,
        "cost": None if row.cost is None else str(row.cost),
        "pending_approvals": row.pending_approvals,
    }
