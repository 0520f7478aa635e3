"""The README's durable example with a list-scripted model, one step per process.

Usage: python scripted_resume_child.py DB EFFECTS start | resume ANSWERS_JSON
Prints one JSON line: stop_reason, text and interrupt ids of the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

SCRIPT: list[Any] = [
    {"text": "Looking first.", "tool_calls": [{"name": "list_temp", "args": {}}]},
    {"tool_calls": [{"name": "clean", "args": {"pattern": "*.tmp"}}]},
    "Cleaned up the temp files.",
]


class AskFirst(InterventionHandler):
    """Every clean waits for a human (no confirm callback: the run suspends)."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        tool = event.selected_tool  # read-only tools run without asking
        return None if tool is None or tool.read_only else Confirm("delete the temp files?")


def build(db: str, effects: Path) -> Agent:
    @tool(read_only=True)
    def list_temp() -> list[str]:
        """List the temp files."""
        return ["a.tmp", "b.tmp"]

    @tool
    def clean(pattern: str) -> str:
        """Delete the files matching pattern."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"clean {pattern}\n")
        return "deleted 2 files"

    return Agent(
        model=ScriptedModel(SCRIPT),
        tools=[list_temp, clean],
        interventions=[AskFirst()],
        store=SQLiteStore(db),
        session_id="ticket-42",
    )


def main() -> None:
    db, effects, mode, *rest = sys.argv[1:]
    agent = build(db, Path(effects))
    result = (
        agent("clean up the temp files") if mode == "start" else agent.resume(json.loads(rest[0]))
    )
    out = {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "interrupts": [i.id for i in result.interrupts],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
