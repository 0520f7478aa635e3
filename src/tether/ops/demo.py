"""``tether demo``: an operations agent with a delete policy on a scripted model, live transcript."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from pathlib import Path
from typing import Literal

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from tether import Agent, Result
from tether.control import ConfirmRequest
from tether.events import FinalResult, ModelCallStarted, TextDelta, ToolFinished, ToolStarted
from tether.ops.demo_agent import (
    TASK,
    DeletePolicy,
    demo_model,
    describe_args,
    file_tools,
    seed_workspace,
)

Decision = Literal["approve", "deny", "ask"]


class Transcript:
    """Prints stream events as a readable transcript."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.in_text = False

    def text(self, delta: str) -> None:
        if not self.in_text:
            self.console.print("[bold cyan]model[/] ", end="")
            self.in_text = True
        self.console.print(delta, end="", markup=False, highlight=False)

    def end_text(self) -> None:
        if self.in_text:
            self.console.print()
            self.in_text = False

    def line(self, markup: str) -> None:
        self.end_text()
        self.console.print(markup)


def make_confirm(decision: Decision, transcript: Transcript) -> object:
    lock = threading.Lock()  # parallel tool calls must not prompt at the same time

    def confirm(request: ConfirmRequest) -> bool:
        with lock:
            transcript.line(f"[yellow]policy[/] {request.handler} asks: [bold]{request.prompt}[/]")
            if decision == "ask":
                answer = transcript.console.input("        approve? [y/N] ").strip().lower()
                approved = answer in ("y", "yes")
            else:
                approved = decision == "approve"
                transcript.line(f"        answered [bold]{decision}[/] (from --{decision})")
            verdict = "[green]approved[/]" if approved else "[red]denied[/]"
            transcript.line(f"        verdict: {verdict}")
            return approved

    return confirm


async def _drive(agent: Agent, transcript: Transcript) -> Result:
    result: Result | None = None
    async for event in agent.stream(TASK):
        if isinstance(event, TextDelta):
            transcript.text(event.text)
        elif isinstance(event, ModelCallStarted):
            transcript.end_text()
        elif isinstance(event, ToolStarted):
            call = event.tool_call
            transcript.line(f"[magenta]tool[/]  {call.name}({describe_args(call.arguments)})")
        elif isinstance(event, ToolFinished):
            res = event.result
            style = "green" if not res.is_error else ("red" if res.status == "denied" else "yellow")
            flat = " ".join(res.content.split())
            preview = flat if len(flat) <= 90 else flat[:87] + "..."
            transcript.line(f"      [{style}]{res.status}[/] {res.name}: {preview}")
        elif isinstance(event, FinalResult):
            result = event.result
    transcript.end_text()
    assert result is not None
    return result


def run_demo(approve: bool, deny: bool, console: Console | None = None) -> Result:
    """Run the demo; returns the Result (the CLI prints the summary)."""
    console = console or Console()
    decision: Decision = "approve" if approve else "deny" if deny else "ask"
    if decision == "ask" and not sys.stdin.isatty():
        decision = "deny"
        console.print(
            "[dim]No terminal attached and no --approve/--deny: deletes will be denied.[/]"
        )
    console.print(
        Panel(
            "This demo runs tether's real loop, tools and policy on a [bold]scripted model[/] "
            "(no API key, no network): the model's words are canned, everything else is real.\n"
            "To use a real model: Agent(model=...) with a model object, or set TETHER_MODEL.",
            title="tether demo",
        )
    )
    transcript = Transcript(console)
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as tmp:
        root = Path(tmp)
        seed_workspace(root)
        before = {p.name: p.stat().st_size for p in root.iterdir()}
        console.print(f"[dim]workspace: {root}[/]\n[bold]task[/]  {TASK}")
        agent = Agent(
            model=demo_model(),
            tools=file_tools(root),
            interventions=[DeletePolicy()],
            confirm=make_confirm(decision, transcript),  # type: ignore[arg-type]
        )
        result = asyncio.run(_drive(agent, transcript))
        after = {p.name: p.stat().st_size for p in root.iterdir()}
        agent.close()
    _summary(console, result, before, after)
    return result


def _summary(
    console: Console, result: Result, before: dict[str, int], after: dict[str, int]
) -> None:
    table = Table(title="summary", show_header=False)
    table.add_row("stop reason", result.stop_reason)
    u = result.usage
    table.add_row("model calls", str(u.model_calls))
    table.add_row("tool calls run", str(u.tool_calls))
    table.add_row("tokens (in/out)", f"{u.input_tokens} / {u.output_tokens}")
    removed = sorted(set(before) - set(after))
    freed = sum(before[n] for n in removed)
    table.add_row("files deleted", ", ".join(removed) or "none")
    table.add_row("bytes freed", str(freed))
    table.add_row("files kept", ", ".join(sorted(after)))
    console.print(table)
