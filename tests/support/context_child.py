"""A long durable run with a summarising manager, killed and resumed across processes.

Usage: python context_child.py DB VIEWS MODE
MODE: ``run`` (SIGKILL inside lookup 120), ``crash_summary`` (SIGKILL inside the
first summarising call), ``resume`` (agent.resume() to the end).
Every request the main model receives is appended to VIEWS as one JSON line
(its message dicts, and how many summarising calls this process had made).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from tether import Agent, Execution, tool
from tether.context import Summarizing
from tether.durable import SQLiteStore
from tether.messages import Message
from tether.models import ScriptedModel

TURNS = 200


def main() -> None:
    db, views, mode = sys.argv[1:]
    summaries = {"calls": 0}

    @tool(idempotent=True)
    def lookup(n: int) -> str:
        """Look a record up."""
        if mode == "run" and n == 120:
            os.kill(os.getpid(), signal.SIGKILL)
        return f"record {n}: " + "x" * 400

    def play(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        with open(views, "a", encoding="utf-8") as out:
            line = {"messages": [m.to_dict() for m in messages], "summaries": summaries["calls"]}
            out.write(json.dumps(line) + "\n")
        done = 0
        for message in reversed(messages):
            results = message.tool_results
            if results:
                done = int(results[0].content.split(":", 1)[0].split()[-1]) + 1
                break
        if done >= TURNS:
            return f"done after {done} lookups"
        return {"tool_calls": [{"name": "lookup", "args": {"n": done}}]}

    def summarise(messages: list[Message], specs: list[dict[str, Any]]) -> str:
        summaries["calls"] += 1
        if mode == "crash_summary":
            os.kill(os.getpid(), signal.SIGKILL)
        return f"summary #{summaries['calls']} in process {os.getpid()}"

    agent = Agent(
        ScriptedModel(play, name="durable-long", context_window=3_000, overflow_at=3_000),
        tools=[lookup],
        system_prompt="You look records up.",
        store=SQLiteStore(db),
        session_id="long-1",
        execution=Execution(context=Summarizing(ScriptedModel(summarise, name="sum"))),
        limits=None,  # a long run on purpose: no default cap of 90 model calls
    )
    result = agent.resume() if mode == "resume" else agent("look up the records")
    print(json.dumps({"stop_reason": result.stop_reason, "text": result.text}))


if __name__ == "__main__":
    main()
