"""``tether sessions search``: the table of hits (every cell escaped, the snippets are
untrusted text, already redacted by :mod:`tether.governance.search`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from tether.ops.cli_common import when
from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.governance.search import SearchHit


def hits_table(hits: list[SearchHit], where: str, query: str) -> Table:
    """Best first: session, entry, time, role and the redacted snippet."""
    table = Table(title=safe(f"sessions matching {query!r} in {where}", one_line=True), expand=True)
    table.add_column("#", justify="right", style="dim")
    table.add_column("session", overflow="fold")
    table.add_column("seq", justify="right", style="dim")
    table.add_column("time", no_wrap=True)
    table.add_column("role", style="cyan")
    table.add_column("snippet", ratio=1, overflow="fold")
    for rank, hit in enumerate(hits, start=1):
        table.add_row(
            str(rank),
            safe(hit.session_id, one_line=True),
            str(hit.seq),
            when(hit.at),
            safe(hit.role, one_line=True),
            safe(hit.snippet, one_line=True),
        )
    return table
