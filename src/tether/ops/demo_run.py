"""One process of the demo: ``python -m tether.ops.demo_run start|resume DIR [ANSWERS_JSON]``.

``start`` runs the operations agent until its delete policy suspends it for approval
(the process then exits); ``resume`` is a separate process that answers the pending
approvals from the durable session and finishes the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

from rich.console import Console

from tether import Agent, Result
from tether.durable import SQLiteStore
from tether.events import (
    FinalResult,
    ModelCallStarted,
    StreamEvent,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from tether.ops.demo_agent import TASK, DeletePolicy, demo_model, describe_args, file_tools

SESSION_ID = "ops-demo"


def build_agent(root: Path) -> Agent:
    """The demo agent on the workspace ``root/workspace`` with its journal in ``root/tether.db``."""
    return Agent(
        model=demo_model(),
        tools=file_tools(root / "workspace"),
        interventions=[DeletePolicy()],
        store=SQLiteStore(root / "tether.db"),
        session_id=SESSION_ID,
    )


class Transcript:
    """Prints stream events as a readable transcript."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.in_text = False

    def end_text(self) -> None:
        if self.in_text:
            self.console.print()
            self.in_text = False

    def line(self, markup: str) -> None:
        self.end_text()
        self.console.print(markup)

    async def follow(self, events: AsyncGenerator[StreamEvent, None]) -> Result:
        """Print every event of ``events``; return the run's Result."""
        result: Result | None = None
        async for event in events:
            if isinstance(event, TextDelta):
                if not self.in_text:
                    self.console.print("[bold cyan]model[/] ", end="")
                    self.in_text = True
                self.console.print(event.text, end="", markup=False, highlight=False)
            elif isinstance(event, ModelCallStarted):
                self.end_text()
            elif isinstance(event, ToolStarted):
                call = event.tool_call
                self.line(f"[magenta]tool[/]  {call.name}({describe_args(call.arguments)})")
            elif isinstance(event, ToolFinished):
                res = event.result
                style = (
                    "green" if not res.is_error else "red" if res.status == "denied" else "yellow"
                )
                flat = " ".join(res.content.split())
                preview = flat if len(flat) <= 90 else flat[:87] + "..."
                self.line(f"      [{style}]{res.status}[/] {res.name}: {preview}")
            elif isinstance(event, FinalResult):
                result = event.result
        self.end_text()
        assert result is not None
        return result


def main(argv: list[str]) -> int:
    mode, root = argv[0], Path(argv[1])
    console = Console()
    agent = build_agent(root)
    transcript = Transcript(console)
    if mode == "start":
        result = asyncio.run(transcript.follow(agent.stream(TASK)))
    else:
        answers = json.loads(argv[2]) if len(argv) > 2 else {}
        result = asyncio.run(transcript.follow(agent.resume_stream(answers)))
    agent.close()
    console.print(
        f"[dim]process {os.getpid()} stops: stop reason [bold]{result.stop_reason}[/]"
        + (f", {len(result.interrupts)} approval(s) pending[/]" if result.interrupts else "[/]")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
