"""``tether demo``: an operations agent that suspends for approval in one process and
finishes in another, on a scripted model, with a live transcript."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from tether.control.interrupts import Interrupt
from tether.durable import SQLiteStore
from tether.ops.demo_agent import TASK, seed_workspace
from tether.ops.demo_run import SESSION_ID
from tether.session import fold

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
        pending = asyncio.run(_pending(root))
        answers = {i.id: _decide(console, i, decision) for i in pending}
        console.rule("[bold]process 2[/]: a separate process resumes the saved session")
        console.print(
            f"[dim]python -m tether.ops.demo_run resume {root} '<answers>'  "
            "(same as Agent(..., store=SQLiteStore(...), session_id=...).resume(answers))[/]"
        )
        _child(["resume", str(root), json.dumps(answers)])
        outcome = asyncio.run(_outcome(root, before))
    _summary(console, outcome)
    return outcome


def _child(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "tether.ops.demo_run", *args], check=False)
    if done.returncode != 0:
        raise RuntimeError(f"demo process {args[0]} failed with exit code {done.returncode}")


async def _pending(root: Path) -> list[Interrupt]:
    store = SQLiteStore(root / "tether.db")
    record = await store.load(SESSION_ID)
    await store.close()
    assert record is not None
    return fold(record).interrupts


def _decide(console: Console, interrupt: Interrupt, decision: Decision) -> str:
    console.print(f"[yellow]approval[/] {interrupt.reason}  [dim](interrupt {interrupt.id})[/]")
    if decision == "ask":
        answer = console.input("        approve? [y/N] ").strip().lower()
        verdict = "approve" if answer in ("y", "yes") else "deny"
    else:
        verdict = decision
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
