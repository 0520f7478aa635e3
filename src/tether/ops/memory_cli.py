"""``tether memory``: list, show and remove the long-term memory entries of a store
(``tether.tools.memory``). Entry texts are untrusted (a model wrote them): they are
redacted by the one rule (:func:`~tether.governance.masks.redact_text`) and escaped for
the terminal; ``--json`` prints the same redacted values, one JSON object per line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.table import Table

from tether.ops.cli_common import JSON, STORE, command_group, fail, when, with_store
from tether.ops.store_url import describe
from tether.ops.terminal import json_line, safe

if TYPE_CHECKING:
    from tether.durable.memory_entries import MemoryEntry

app = command_group("memory", "Inspect and remove the long-term memory entries (memory tool).")
SCOPE = typer.Option(..., "--scope", help="The memory scope (as the memory tool was given).")
SHOWN_MAX = 120
"""Characters of an entry's text in the list (show prints all of it)."""


@app.command("list")
def list_memory(
    scope: str | None = typer.Option(
        None, "--scope", help="The scope whose entries to list (omitted: list the scopes)."
    ),
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """List a scope's entries, oldest first; without --scope, the scopes and their usage."""
    if scope is None:
        scopes = with_store(store, lambda s: s.memory_entries.scopes(), read_only=True)
        if as_json:
            for name, usage in scopes:
                typer.echo(
                    json_line({"scope": name, "entries": usage.entries, "chars": usage.chars})
                )
            return
        table = Table(title=safe(f"memory scopes in {describe(store)}"), title_justify="left")
        for column in ("scope", "entries", "characters"):
            table.add_column(column)
        for name, usage in scopes:
            table.add_row(safe(name, one_line=True), str(usage.entries), str(usage.chars))
        Console(highlight=False).print(table)
        return
    entries = with_store(store, lambda s: s.memory_entries.entries(scope), read_only=True)
    if as_json:
        for entry in entries:
            typer.echo(json_line(_row(entry)))
        return
    title = f"memory of scope {scope!r} in {describe(store)}: {len(entries)} entries"
    table = Table(title=safe(title), title_justify="left")
    for column in ("id", "text", "updated"):
        table.add_column(column)
    for entry in entries:
        text = _text(entry)
        cut = text if len(text) <= SHOWN_MAX else text[: SHOWN_MAX - 1] + "…"
        table.add_row(safe(entry.id), safe(cut, one_line=True), when(entry.updated_at))
    Console(highlight=False).print(table)


@app.command("show")
def show_memory(
    entry_id: str = typer.Argument(..., help="The entry's id."),
    scope: str = SCOPE,
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """Print one entry in full."""
    entry = with_store(store, lambda s: s.memory_entries.get(scope, entry_id), read_only=True)
    if entry is None:
        fail(f"no memory entry {entry_id!r} in scope {scope!r} of {describe(store)}")
    if as_json:
        typer.echo(json_line(_row(entry)))
        return
    console = Console(highlight=False)
    console.print(safe(f"memory entry {entry.id} of scope {entry.scope!r}"), style="bold")
    console.print(safe(f"added {when(entry.created_at)}, updated {when(entry.updated_at)}"))
    console.print(safe(_text(entry)))


@app.command("remove")
def remove_memory(
    entry_id: str = typer.Argument(..., help="The entry's id."),
    scope: str = SCOPE,
    store: str = STORE,
    as_json: bool = JSON,
) -> None:
    """Remove one entry (recorded in the audit log as memory.written, action remove)."""

    async def remove(s: Any) -> MemoryEntry | None:
        removed: MemoryEntry | None = await s.memory_entries.remove(scope, entry_id)
        if removed is not None:
            data = {"scope": scope, "entry_id": entry_id, "action": "remove", "by": "cli"}
            await s.audit.append("memory.written", data)
        return removed

    removed = with_store(store, remove)
    if removed is None:
        fail(f"no memory entry {entry_id!r} in scope {scope!r} of {describe(store)}")
    if as_json:
        typer.echo(json_line({"removed": True, **_row(removed)}))
        return
    Console(highlight=False).print(safe(f"removed memory entry {entry_id} of scope {scope!r}"))


def _text(entry: MemoryEntry) -> str:
    from tether.governance.masks import redact_text

    return redact_text(entry.text)


def _row(entry: MemoryEntry) -> dict[str, Any]:
    return {
        "scope": entry.scope,
        "id": entry.id,
        "text": _text(entry),
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
    }
