"""``tether demo``: an operations agent that suspends for approval in one process and
finishes in another (``tether worker --once``), on a scripted model, with a live
transcript; in between it shows the operator's commands and decides the approvals
through ``store.approvals.decide``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from tether.durable import Approval, SQLiteStore
from tether.ops.demo_agent import TASK, seed_workspace
from tether.ops.demo_run import DEMO_DIR_ENV, SESSION_ID

Decision = Literal["approve", "deny", "ask"]


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


def run_demo(approve: bool, deny: bool, console: Console | None = None) -> DemoOutcome:
    """Run the demo; ``approve``/``deny`` answer every approval, else ask on a terminal."""
    console = console or Console()
    decision: Decision = "approve" if approve else "deny" if deny else "ask"
    if decision == "ask" and not sys.stdin.isatty():
        decision = "deny"
        console.print(
            "[dim]No terminal attached and no --approve/--deny: deletes will be denied.[/]"
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
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        workspace.mkdir()
        seed_workspace(workspace)
        before = {p.name: p.stat().st_size for p in workspace.iterdir()}
        console.print(f"[dim]workspace: {workspace}\nsession journal: {root / 'tether.db'}[/]")
        console.print(f"[bold]task[/]  {TASK}")
        console.rule("[bold]process 1[/]: run until the policy asks for approval")
        _child(["start", str(root)])
        db = root / "tether.db"
        pending = asyncio.run(_pending(db))
        _operator_help(console, db, pending)
        asyncio.run(_decide_all(console, db, pending, decision))
        console.rule("[bold]process 2[/]: a separate process resumes the saved session")
        console.print(f"[dim]{_worker_command(db)}[/]", highlight=False)
        _worker(root)
        outcome = asyncio.run(_outcome(root, before))
    _summary(console, outcome)
    return outcome


def _child(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "tether.ops.demo_run", *args], check=False)
    if done.returncode != 0:
        raise RuntimeError(f"demo process {args[0]} failed with exit code {done.returncode}")


def _worker_command(db: Path) -> str:
    return (
        f"{DEMO_DIR_ENV}={db.parent} tether worker --app tether.ops.demo_run:agent_factory "
        f"--store {db} --once"
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
    lines = [
        f"tether approvals list --store {db}",
        f"tether approvals show {first} --store {db}",
        f"tether approvals approve {first} --note 'ok' --store {db}",
        f"tether approvals deny {first} --note 'keep it' --store {db}",
        f"tether serve --store {db}            # web inbox (extra: server)",
        _worker_command(db),
    ]
    console.print(
        Panel(
            "\n".join(lines),
            title="operator: the session is suspended; approvals are waiting in the store",
            subtitle="the demo decides them below and runs the worker for you",
        ),
        highlight=False,
    )


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
    console.print(f"[yellow]approval[/] {approval.reason}  [dim]({approval.id})[/]")
    if decision == "ask":
        answer = console.input("        approve? [y/N] ").strip().lower()
        verdict: Literal["approve", "deny"] = "approve" if answer in ("y", "yes") else "deny"
    else:
        verdict = "approve" if decision == "approve" else "deny"
        console.print(f"        answered [bold]{decision}[/] (from --{decision})")
    shown = "[green]approved[/]" if verdict == "approve" else "[red]denied[/]"
    console.print(f"        verdict: {shown}")
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
    table.add_row("stop reason", outcome.stop_reason)
    table.add_row("model calls", str(outcome.model_calls))
    table.add_row("tool calls run", str(outcome.tool_calls))
    table.add_row("tokens (in/out)", f"{outcome.input_tokens} / {outcome.output_tokens}")
    table.add_row("files deleted", ", ".join(outcome.deleted) or "none")
    table.add_row("bytes freed", str(outcome.freed))
    table.add_row("files kept", ", ".join(outcome.kept))
    console.print(table)
