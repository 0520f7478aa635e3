"""A durable session on OpenAIResponsesModel (the fault server), one step per process.

Usage: python responses_resume_child.py BASE_URL MODEL DB EFFECTS start | resume ANSWERS_JSON
Prints one JSON line: stop_reason, text and interrupt ids of the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import OpenAIResponsesModel, RetryPolicy


class AskFirst(InterventionHandler):
    """Every clean waits for a human (no confirm callback: the run suspends)."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm("delete the temp files?")


def main() -> None:
    base_url, name, db, effects, mode, *rest = sys.argv[1:]

    @tool
    def clean(pattern: str) -> str:
        """Delete the files matching pattern."""
        with Path(effects).open("a", encoding="utf-8") as f:
            f.write(f"clean {pattern}\n")
        return "deleted 2 files"

    model = OpenAIResponsesModel(
        name, base_url=base_url, api_key="sk-test", retry=RetryPolicy(max_attempts=1)
    )
    agent = Agent(
        model=model,
        tools=[clean],
        interventions=[AskFirst()],
        store=SQLiteStore(db),
        session_id="responses-1",
    )
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
