"""``tether demo``: an operations agent that suspends for approval in one process and
finishes in another (``tether worker --once``), on a scripted model, with a live
transcript; in between it shows the operator's commands and decides the approvals
through ``store.approvals.decide``.

The demo keeps its workspace and store in ``./tether-demo/`` (``--dir``), so the
commands it prints work as printed afterwards; a new run starts that folder afresh.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tether.durable import Approval, SQLiteStore
from tether.errors import ConfigurationError
from tether.ops.demo_agent import TASK, seed_workspace
from tether.ops.demo_run import DEMO_DIR_ENV, SESSION_ID
from tether.ops.terminal import safe

Decision = Literal["approve", "deny", "ask"]
DEMO_DIR = Path("tether-demo")
"""Where the demo keeps its workspace and store, relative to the working directory."""
MARKER = ".tether-demo"
"""A file in the demo folder: only a folder holding it is reset by a new run."""


@dataclass(slots=True)
class DemoOutcome:
    """What the two demo processes achieved together (read back from the journal)."""

    stop_reason: str
    model_calls: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    deleted: list[str]
    kept: list[str]
    freed: int


def run_demo(
    approve: bool, deny: bool, console: Console | None = None, directory: Path = DEMO_DIR
) -> DemoOutcome:
    """Run the demo in ``directory``; ``approve``/``deny`` answer every approval, else ask
    on a terminal (without one, deny)."""
    console = console or Console()
    decision: Decision = "approve" if approve else "deny" if deny else "ask"
    if decision == "ask" and not sys.stdin.isatty():
        decision = "deny"
        console.print(
            "[dim]No terminal attached and no --approve/--deny: deletes will be denied "
            "(approve them with: make demo DEMO_ARGS=--approve, or tether demo --approve).[/]"
        )
    console.print(
        Panel(
            "This demo runs tether's real loop, tools, policy and durable sessions on a "
            "[bold]scripted model[/] (no API key, no network): the model's words are canned, "
            "everything else is real.\n"
            "To use a real model: Agent(model=...) with a model object, or set TETHER_MODEL.",
            title="tether demo",
        )
    )
    root = prepare(directory)
    workspace = root / "workspace"
    before = {p.name: p.stat().st_size for p in workspace.iterdir()}
    db = root / "tether.db"
    console.print(safe(f"workspace: {shown(workspace)}\nsession store: {shown(db)}", "dim"))
    console.print(Text("task", style="bold") + Text(f"  {TASK}"))
    console.rule("[bold]process 1[/]: run until the policy asks for approval")
    _child(["start", str(root)])
    pending = asyncio.run(_pending(db))
    _operator_help(console, db, pending)
    asyncio.run(_decide_all(console, db, pending, decision))
    console.rule("[bold]process 2[/]: a separate process resumes the saved session")
    console.print(safe(_worker_command(db), "dim"), soft_wrap=True)
    _worker(root)
    outcome = asyncio.run(_outcome(root, before))
    _summary(console, outcome)
    _afterwards(console, db, pending)
    return outcome


def prepare(directory: Path) -> Path:
    """An empty demo folder with a fresh workspace; a folder of an earlier run is reset,
    any other non-empty folder is refused (the demo deletes files in it)."""
    root = directory.resolve()
    if root.exists() and not root.is_dir():
        raise ConfigurationError(f"{directory} is not a folder; pass another --dir")
    if root.is_dir() and any(root.iterdir()) and not (root / MARKER).exists():
        raise ConfigurationError(
            f"{directory} exists and was not made by tether demo; move it or pass --dir"
        )
    if root.is_dir():
        for name in ("tether.db", "tether.db-wal", "tether.db-shm"):
            (root / name).unlink(missing_ok=True)
        shutil.rmtree(root / "workspace", ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("made by `tether demo`; a new run resets this folder\n")
    (root / "workspace").mkdir()
    seed_workspace(root / "workspace")
    return root


def shown(path: Path) -> str:
    """``path`` as a user types it here: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path.resolve())


def tether_command() -> str:
    """How to run this tether from the working directory: ``tether`` when that is what
    PATH finds, else the path of the script next to this Python (``.venv/bin/tether``)."""
    script = Path(sys.executable).with_name("tether")
    on_path = shutil.which("tether")
    if on_path is not None and (not script.exists() or Path(on_path).resolve() == script.resolve()):
        return "tether"
    if script.exists():
        return shlex.quote(shown(script))
    return f"{shlex.quote(sys.executable)} -m tether.ops.cli"


def _child(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "tether.ops.demo_run", *args], check=False)
    if done.returncode != 0:
        raise RuntimeError(f"demo process {args[0]} failed with exit code {done.returncode}")


def _worker_command(db: Path) -> str:
    return (
        f"{DEMO_DIR_ENV}={shlex.quote(shown(db.parent))} {tether_command()} worker "
        f"--app tether.ops.demo_run:agent_factory --store {shlex.quote(shown(db))} --once"
    )


def _worker(root: Path) -> None:
    """Process 2 is ``tether worker --once``: it claims the ready session and resumes it."""
    args = ["worker", "--app", "tether.ops.demo_run:agent_factory"]
    args += ["--store", str(root / "tether.db"), "--once"]
    done = subprocess.run(
        [sys.executable, "-c", "from tether.ops.cli import main; main()", *args],
        env={**os.environ, DEMO_DIR_ENV: str(root)},
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"demo worker failed with exit code {done.returncode}")


async def _pending(db: Path) -> list[Approval]:
    store = SQLiteStore(db)
    try:
        return await store.approvals.pending(session_id=SESSION_ID)
    finally:
        await store.close()


def _operator_help(console: Console, db: Path, pending: list[Approval]) -> None:
    """The commands a person would use on this store (while the demo runs)."""
    first = pending[0].id if pending else "APPROVAL_ID"
    run, store = tether_command(), shlex.quote(shown(db))
    lines = [
        f"{run} approvals list --store {store}",
        f"{run} approvals show {first} --store {store}",
        f"{run} approvals approve {first} --note 'ok' --store {store}",
        f"{run} approvals deny {first} --note 'keep it' --store {store}",
        f"{run} serve --store {store}            # web inbox (extra: server)",
        _worker_command(db),
    ]
    console.rule("operator: the session is suspended; approvals are waiting in the store")
    for line in lines:  # unwrapped, so each copies as one command
        console.print(safe(line), soft_wrap=True, highlight=False)
    console.print(Text("(the demo decides them below and runs the worker for you)", style="dim"))


def _afterwards(console: Console, db: Path, pending: list[Approval]) -> None:
    """Commands to look at what happened; printed unwrapped so they copy as they are."""
    first = pending[0].id if pending else "APPROVAL_ID"
    run, store = tether_command(), shlex.quote(shown(db))
    console.rule(safe(f"afterwards: the store stays in {shown(db.parent)}/"))
    for line in (
        f"{run} approvals list --all --store {store}",
        f"{run} approvals show {first} --store {store}",
        f"{run} sessions show {SESSION_ID} --store {store}",
        f"{run} audit show {SESSION_ID} --store {store}",
        f"{run} audit verify --store {store}",
    ):
        console.print(safe(line), soft_wrap=True, highlight=False)


async def _decide_all(
    console: Console, db: Path, pending: list[Approval], decision: Decision
) -> None:
    """Decide each approval through ``store.approvals.decide`` (the session becomes ready)."""
    store = SQLiteStore(db)
    try:
        for approval in pending:
            verdict = _decide(console, approval, decision)
            who = "you" if decision == "ask" else f"demo --{decision}"
            await store.approvals.decide(approval.id, verdict, decided_by=who)
    finally:
        await store.close()


def _decide(console: Console, approval: Approval, decision: Decision) -> Literal["approve", "deny"]:
    reason = approval.reason if isinstance(approval.reason, str) else str(approval.reason)
    console.print(
        Text("approval ", style="yellow") + safe(reason) + safe(f"  ({approval.id})", "dim")
    )
    if decision == "ask":
        answer = console.input(Text("        approve? [y/N] ")).strip().lower()
        verdict: Literal["approve", "deny"] = "approve" if answer in ("y", "yes") else "deny"
    else:
        verdict = "approve" if decision == "approve" else "deny"
        console.print(f"        answered [bold]{decision}[/] (from --{decision})")
    said = "[green]approved[/]" if verdict == "approve" else "[red]denied[/]"
    console.print(f"        verdict: {said}")
    return verdict


async def _outcome(root: Path, before: dict[str, int]) -> DemoOutcome:
    store = SQLiteStore(root / "tether.db")
    entries = await store.read_entries(SESSION_ID)
    await store.close()
    totals = {"model_calls": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0}
    status = "unknown"
    for entry in entries:
        if entry.kind == "usage":
            for key in totals:
                totals[key] += int(entry.data["usage"].get(key, 0))
        elif entry.kind == "status":
            status = entry.data["status"]
    workspace = root / "workspace"
    after = {p.name for p in workspace.iterdir()}
    deleted = sorted(set(before) - after)
    return DemoOutcome(
        stop_reason="end_turn" if status == "completed" else status,
        deleted=deleted,
        kept=sorted(after),
        freed=sum(before[n] for n in deleted),
        **totals,
    )


def _summary(console: Console, outcome: DemoOutcome) -> None:
    table = Table(title="summary (both processes)", show_header=False)
    table.add_row("stop reason", safe(outcome.stop_reason))
    table.add_row("model calls", str(outcome.model_calls))
    table.add_row("tool calls run", str(outcome.tool_calls))
    table.add_row("tokens (in/out)", f"{outcome.input_tokens} / {outcome.output_tokens}")
    table.add_row("files deleted", safe(", ".join(outcome.deleted) or "none"))
    table.add_row("bytes freed", str(outcome.freed))
    table.add_row("files kept", safe(", ".join(outcome.kept)))
    console.print(table)
