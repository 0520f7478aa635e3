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
from typing import Any

from rich.console import Console
from rich.text import Text

from tether import Agent, Result
from tether.control import AfterMessageAdded, AfterToolCall, BeforeToolCall
from tether.durable import SQLiteStore
from tether.events import (
    FinalResult,
    ModelCallStarted,
    StreamEvent,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from tether.messages import ToolResult
from tether.ops.demo_agent import TASK, DeletePolicy, demo_model, describe_args, file_tools
from tether.ops.terminal import safe

SESSION_ID = "ops-demo"
DEMO_DIR_ENV = "TETHER_DEMO_DIR"


def build_agent(root: Path) -> Agent:
    """The demo agent on the workspace ``root/workspace`` with its journal in ``root/tether.db``."""
    return Agent(
        model=demo_model(),
        tools=file_tools(root / "workspace"),
        interventions=[DeletePolicy()],
        store=SQLiteStore(root / "tether.db"),
        session_id=SESSION_ID,
    )


def agent_factory(session_id: str = SESSION_ID) -> Agent:
    """``tether worker --app tether.ops.demo_run:agent_factory``: the demo agent of the
    directory in ``$TETHER_DEMO_DIR``, printing its transcript as the worker runs it."""
    if session_id != SESSION_ID:
        raise ValueError(f"the demo app runs only session {SESSION_ID!r}, not {session_id!r}")
    agent = build_agent(Path(os.environ[DEMO_DIR_ENV]))
    transcript = Transcript(Console())

    @agent.on(AfterMessageAdded)
    def _text(event: AfterMessageAdded) -> None:
        if event.message.role == "assistant" and event.message.text:
            transcript.line(Text("model ", style="bold cyan") + safe(event.message.text))

    @agent.on(BeforeToolCall)
    def _start(event: BeforeToolCall) -> None:
        call = event.tool_call
        transcript.call(call.name, call.arguments)

    @agent.on(AfterToolCall)
    def _end(event: AfterToolCall) -> None:
        transcript.result(event.result)

    return agent


class Transcript:
    """Prints stream events as a readable transcript."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.in_text = False

    def end_text(self) -> None:
        if self.in_text:
            self.console.print()
            self.in_text = False

    def line(self, text: Text) -> None:
        self.end_text()
        self.console.print(text)

    def call(self, name: str, arguments: dict[str, Any]) -> None:
        self.line(Text("tool  ", style="magenta") + safe(f"{name}({describe_args(arguments)})"))

    def result(self, res: ToolResult) -> None:
        style = "green" if not res.is_error else "red" if res.status == "denied" else "yellow"
        flat = " ".join(res.content.split())
        preview = flat if len(flat) <= 90 else flat[:87] + "..."
        self.line(Text("      ") + safe(res.status, style) + safe(f" {res.name}: {preview}"))

    async def follow(self, events: AsyncGenerator[StreamEvent, None]) -> Result:
        """Print every event of ``events``; return the run's Result."""
        result: Result | None = None
        async for event in events:
            if isinstance(event, TextDelta):
                if not self.in_text:
                    self.console.print("[bold cyan]model[/] ", end="")
                    self.in_text = True
                self.console.print(safe(event.text), end="", highlight=False)
            elif isinstance(event, ModelCallStarted):
                self.end_text()
            elif isinstance(event, ToolStarted):
                self.call(event.tool_call.name, event.tool_call.arguments)
            elif isinstance(event, ToolFinished):
                self.result(event.result)
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
