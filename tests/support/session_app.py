"""A small durable agent run in child processes by the session tests.

Usage: python session_app.py DB SESSION_ID MODE [ANSWER_JSON]
MODE: start | resume | crash-in-tool | recover
The side-effect file is DB + ".effects": one line per real execution of ``record``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tether import Agent, ToolContext, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel


def build(db: str, session_id: str, crash: bool = False) -> Agent:
    effects = Path(db + ".effects")

    @tool
    def record(line: str, ctx: ToolContext) -> str:
        """Append a line to the effects file (not idempotent)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        if crash and os.environ.get("TETHER_TEST_CRASH") == "1":
            os._exit(9)  # die after the side effect, before the result is saved
        return f"recorded {line}"

    class AskFirst(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm:
            return Confirm(f"record {event.tool_call.arguments.get('line')}?")

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "done: " + messages[-1].tool_results[0].content}
        return {"tool_calls": [{"name": "record", "args": {"line": "hello"}}]}

    return Agent(
        model=ScriptedModel(script),
        tools=[record],
        interventions=[] if crash else [AskFirst()],
        store=SQLiteStore(db),
        session_id=session_id,
    )


def main() -> None:
    db, session_id, mode = sys.argv[1:4]
    agent = build(db, session_id, crash=mode in ("crash-in-tool", "recover"))
    if mode in ("start", "crash-in-tool"):
        result = agent("record hello")
    else:
        answers = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
        result = agent.resume(answers)
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "text": result.text,
                "interrupts": [i.to_dict() for i in result.interrupts],
            }
        )
    )


if __name__ == "__main__":
    main()
