"""How ``tether approvals list`` and ``show`` print approvals: the table, one approval's
details, ages and expiry (every value escaped; arguments as filed, redacted)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from tether.ops.cli_common import when
from tether.ops.store_url import describe
from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.durable import Approval

CLIP = 200
STATUS_STYLE = {"pending": "bold magenta", "approved": "green", "denied": "red", "expired": "dim"}


def age_text(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: the largest whole unit."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def expires_cell(approval: Approval, now: float) -> Text:
    """When a pending approval expires and what it does then (``never``, ``overdue``)."""
    if approval.expires_at is None:
        return Text("never", style="dim")
    left = approval.expires_at - now
    if left <= 0:
        return Text("overdue (", style="bold red") + safe(approval.on_expiry) + Text(")")
    return Text(f"in {age_text(left)} (") + safe(approval.on_expiry) + Text(")")


def json_cell(value: Any, full: bool = False) -> Text:
    """A value as JSON, escaped, cut to :data:`CLIP` characters unless ``full``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return safe(text if full or len(text) <= CLIP else text[:CLIP] + " …")


def status_text(status: str) -> Text:
    """An approval status, coloured by :data:`STATUS_STYLE`."""
    return safe(status, STATUS_STYLE.get(status, ""))


def approvals_table(rows: list[Approval], store: str, *, show_all: bool, wide: bool) -> Table:
    """The ``approvals list`` table (``wide``: server, arguments, reason and expiry)."""
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
            cells += [safe(a.server or "-"), json_cell(a.arguments), json_cell(a.reason)]
        cells.append(Text(age_text(now - a.requested_at)))
        if wide:
            cells.append(expires_cell(a, now) if a.status == "pending" else Text("-", style="dim"))
        table.add_row(*cells, *([status_text(a.status)] if show_all else []))
    return table


def approval_grid(a: Approval) -> Table:
    """One approval: the request as approvers see it and, once decided, the decision."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    now = time.time()
    rows: list[tuple[str, Text | str]] = [
        ("approval", safe(a.id, one_line=True)),
        ("status", status_text(a.status)),
        ("session", safe(a.session_id, one_line=True)),
        ("interrupt", safe(f"{a.interrupt_id} ({a.source}: {a.name})")),
        ("tool", safe(a.tool or "-")),
        ("server", safe(a.server or "-")),
        ("arguments", json_cell(a.arguments, full=True)),
        ("args sha256", safe(a.args_sha256 or "-")),
        ("reason", json_cell(a.reason, full=True)),
        ("requested", when(a.requested_at, now)),
        ("expires", expires_cell(a, now) if a.status == "pending" else Text("-")),
    ]
    if a.status != "pending":
        rows += [("decision", safe(a.decision or "-")), ("decided by", safe(a.decided_by or "-"))]
        rows.append(("decided", when(a.decided_at, now) if a.decided_at else "-"))
        if a.edited_args is not None:
            rows.append(("edited args", json_cell(a.edited_args, full=True)))
        if a.response is not None:
            rows.append(("response", json_cell(a.response, full=True)))
        rows.append(("note", safe(a.note or "-")))
    for key, value in rows:
        grid.add_row(key, value)
    return grid
