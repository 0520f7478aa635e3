"""What every ``tether`` command shares: the ``--store``, ``--output`` and ``--json``
options, opening the store around a command, failing with a message, and how times
and costs read in a terminal."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from tether.errors import TetherError
from tether.ops.store_url import DEFAULT_STORE, open_store
from tether.ops.terminal import safe

if TYPE_CHECKING:
    from tether.durable import Store

T = TypeVar("T")


def command_group(name: str, text: str) -> typer.Typer:
    """A ``tether`` command group: help when called without a command, no shell
    completion, plain help texts ("[server]" is not markup)."""
    return typer.Typer(
        name=name, help=text, no_args_is_help=True, add_completion=False, rich_markup_mode=None
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


def fail(message: str, hint: str | None = None) -> NoReturn:
    """Print ``error: message`` (and a dim ``hint``) on stderr, escaped, and exit 1."""
    err = Console(stderr=True, highlight=False)
    err.print(Text("error: ", style="bold red") + safe(message))
    if hint:
        err.print(safe(hint, "dim"))
    raise typer.Exit(1)


def with_store(
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
        fail(str(exc))


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


def usd(cost: object) -> str:
    """A cost (a Decimal or its string) as ``$0.0123``; ``-`` when unknown."""
    if cost is None:
        return "-"
    from decimal import Decimal

    amount = Decimal(str(cost))
    return f"${amount:.4f}" if amount >= Decimal("0.0001") or not amount else f"${amount:.2e}"
