"""A durable agent whose execute_code program appends lines to a log, run in child
processes by tests/tools/test_execute_code.py.

Usage: python code_app.py DB LOG MODE [INTERRUPT_ID]
MODE: start | resume (approve INTERRUPT_ID) | crash (die inside the second call, after
its side effect) | recover. The log has one line per real execution of ``append``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import execute_code

PROGRAM = "append('a')\nappend('b')\nappend('c')\nprint(count_lines())"


def build(db: str, log: str, *, crash: bool = False) -> Agent:
    @tool
    def append(text: str) -> str:
        """Append a line to the log (not idempotent)."""
        with open(log, "a", encoding="utf-8") as f:
            f.write(text + "\n")
            f.flush()
            os.fsync(f.fileno())
        if crash and text == "b" and os.environ.get("TETHER_TEST_CRASH") == "1":
            os._exit(9)  # die after the side effect, before its result is saved
        return "ok"

    @tool
    def count_lines() -> int:
        """Count the log's lines."""
        return len(Path(log).read_text(encoding="utf-8").splitlines())

    class AskBeforeC(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
            if event.tool_call.arguments.get("text") == "c":
                return Confirm("append c?")
            return None

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "execute_code", "args": {"code": PROGRAM}}]}

    return Agent(
        model=ScriptedModel(turn),
        tools=[execute_code(tools=[append, count_lines])],
        interventions=[] if crash else [AskBeforeC()],
        store=SQLiteStore(db),
        session_id="code",
    )


def main() -> None:
    db, log, mode = sys.argv[1:4]
    with build(db, log, crash=mode in ("crash", "recover")) as agent:
        if mode in ("start", "crash"):
            result = agent("go")
        elif mode == "resume":
            result = agent.resume({sys.argv[4]: "approve"})
        else:
            result = agent.resume()
        print(result.stop_reason)
        print(result.text)


if __name__ == "__main__":
    main()
