"""``tether worker``: resume ready sessions from a store with the app's agents."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.text import Text

from tether.errors import ConfigurationError
from tether.ops import app_loader
from tether.ops.safe_io import protect_stdio
from tether.ops.sessions import STORE
from tether.ops.store_url import describe, open_store
from tether.ops.terminal import safe
from tether.ops.worker import Outcome, Worker, WorkerConfig

if TYPE_CHECKING:
    from tether.durable import Store

_STYLE = {
    "completed": "green",
    "suspended": "yellow",
    "handed back": "cyan",
    "busy": "dim",
    "error": "red",
    "abandoned": "red",
}


def load_factory(spec: str) -> app_loader.AppFactory:
    """``module:factory`` -> the callable (:func:`tether.ops.app_loader.load_factory`),
    a bad spec as a usage error of ``--app``."""
    try:
        return app_loader.load_factory(spec)
    except ConfigurationError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--app'") from exc


def log_line(console: Console, outcome: Outcome) -> None:
    """One line per session: time, session, outcome, duration, detail (all as plain text:
    a session id or an error message is data, never markup or terminal codes)."""
    style = _STYLE.get(outcome.outcome, "magenta")
    waited = "" if outcome.waited is None else f" waited {outcome.waited * 1000:.0f} ms,"
    line = Text(f"{time.strftime('%H:%M:%S')} ") + safe(outcome.session_id, "bold", one_line=True)
    line += Text(" ") + safe(outcome.outcome, style)
    line += Text(f"{waited} ran {outcome.seconds:.2f} s")
    if outcome.detail:
        line += Text("  ") + safe(outcome.detail, "dim", one_line=True)
    console.print(line, highlight=False)


def worker(
    app_spec: str = typer.Option(
        ...,
        "--app",
        help="module:factory; factory(session_id=...) returns the Agent or a workflow.",
    ),
    store: str = STORE,
    once: bool = typer.Option(False, "--once", help="Process what is ready now, then exit."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Sessions run at once."),
    poll: float = typer.Option(1.0, "--poll", min=0.01, help="Seconds between polls."),
    lease_ttl: float = typer.Option(
        30.0, "--lease-ttl", min=0.1, help="Claim ttl until the Agent takes its own lease."
    ),
    grace: float = typer.Option(
        30.0, "--grace", min=0.0, help="On SIGTERM: seconds to finish before handing back."
    ),
    no_listen: bool = typer.Option(
        False, "--no-listen", help="PostgreSQL: poll only, no LISTEN/NOTIFY wake-ups."
    ),
) -> None:
    """Resume sessions that are ready (approved, expired, or re-queued after a crash).
    Keeps running when its stdout or stderr reader goes away (see tether.ops.safe_io)."""
    protect_stdio()
    factory = load_factory(app_spec)
    console = Console()
    config = WorkerConfig(
        concurrency=concurrency,
        poll=poll,
        lease_ttl=lease_ttl,
        grace=grace,
        listen=not no_listen,
        on_outcome=lambda o: log_line(console, o),
    )
    try:
        the_store = open_store(store)
    except Exception as exc:
        console.print(Text("error: ", style="red") + safe(str(exc)))
        raise typer.Exit(code=2) from exc
    mode = "once" if once else f"until SIGTERM (grace {grace:g} s)"
    name = factory.label
    console.print(
        safe(
            f"worker {os.getpid()} on {describe(store)}: {name}, concurrency {concurrency}, {mode}",
            "dim",
        ),
        highlight=False,
    )
    outcomes = asyncio.run(_serve(the_store, factory, config, once))
    errors = sum(o.outcome in ("error", "abandoned") for o in outcomes)
    console.print(
        f"[dim]worker {os.getpid()} stops: {len(outcomes)} session(s), {errors} error(s)[/]"
    )
    raise typer.Exit(code=1 if errors and once else 0)


async def _serve(
    store: Store, factory: app_loader.AppFactory, config: WorkerConfig, once: bool
) -> list[Outcome]:
    work = Worker(store, factory, config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, work.stop)
    try:
        return await work.run(once=once)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
        await store.close()
