"""``tether temporal worker``: serve a tether app's agents on a Temporal task queue."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from tether.ops.cli_common import STORE, command_group, fail
from tether.ops.safe_io import protect_stdio
from tether.ops.store_url import describe, open_store
from tether.ops.terminal import safe
from tether.ops.worker_cli import load_factory

EXTRA_HINT = "pip install 'tether[temporal]' (in a checkout: pip install -e '.[temporal]')"

app = command_group("temporal", "Run tether agents as Temporal workflows.")


@app.command()
def worker(
    app_spec: str = typer.Option(
        ..., "--app", help="module:factory; factory(session_id=...) returns the Agent."
    ),
    address: str = typer.Option(
        "localhost:7233", "--address", help="The Temporal frontend, HOST:PORT."
    ),
    task_queue: str = typer.Option(..., "--task-queue", help="The task queue to poll."),
    store: str = STORE,
    namespace: str = typer.Option("default", "--namespace", help="The Temporal namespace."),
    grace: float = typer.Option(
        30.0, "--grace", min=0.0, help="On SIGTERM: seconds running activities get to finish."
    ),
) -> None:
    """Run a Temporal worker serving tether.AgentWorkflow with the app's agents (model and
    tool calls as activities, approvals in the store's inbox) until SIGINT or SIGTERM.
    Needs the temporal extra."""
    protect_stdio()
    try:
        import tether.temporal  # noqa: F401
    except ImportError as exc:
        fail(f"tether temporal worker needs the temporal extra (temporalio): {exc}", EXTRA_HINT)
    if not task_queue.strip():
        raise typer.BadParameter("must not be empty", param_hint="'--task-queue'")
    load_factory(app_spec)  # a bad --app is a usage error before anything connects
    options = _Options(app_spec, address, task_queue, store, namespace, grace)
    raise typer.Exit(code=asyncio.run(_serve(Console(), options)))


@dataclass(frozen=True)
class _Options:
    app_spec: str
    address: str
    task_queue: str
    store: str
    namespace: str
    grace: float


async def _serve(console: Console, options: _Options) -> int:
    """Connect, open the store (only then: an unreachable server creates nothing), serve."""
    from temporalio.client import Client
    from temporalio.worker import Worker

    from tether.temporal import TetherPlugin

    try:
        client = await Client.connect(options.address, namespace=options.namespace)
    except (RuntimeError, ValueError) as exc:
        _error(console, f"cannot reach Temporal at {options.address}: {exc}")
        return 2
    try:
        store = open_store(options.store, create=True)
    except Exception as exc:
        _error(console, str(exc))
        return 2
    try:
        work = Worker(
            client,
            task_queue=options.task_queue,
            plugins=[TetherPlugin(app=options.app_spec, store=store)],
            graceful_shutdown_timeout=timedelta(seconds=options.grace),
        )
        where = (
            f"{options.address} (namespace {options.namespace}), task queue "
            f"{options.task_queue}, store {describe(options.store)}"
        )
        console.print(
            safe(
                f"temporal worker {os.getpid()} on {where}: until SIGTERM "
                f"(grace {options.grace:g} s)",
                "dim",
                one_line=True,
            ),
            highlight=False,
        )
        return await _run_until_signal(console, work)
    finally:
        await store.close()


async def _run_until_signal(console: Console, work: Any) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    running = asyncio.ensure_future(work.run())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            console.print(safe(f"temporal worker {os.getpid()} stopping", "dim"), highlight=False)
            await work.shutdown()
        try:
            await running
        except Exception as exc:  # the worker failed (bad namespace, lost server...)
            _error(console, f"the Temporal worker stopped: {exc}")
            return 1
        if not stop.is_set():
            _error(console, "the Temporal worker stopped on its own")
            return 1
        console.print(safe(f"temporal worker {os.getpid()} stopped", "dim"), highlight=False)
        return 0
    finally:
        stopping.cancel()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def _error(console: Console, message: str) -> None:
    console.print(Text("error: ", style="red") + safe(message))
