"""A three-level agent tree in a child process that the tree crash campaign kills with SIGKILL.

planner -> researcher -> coder: the researcher runs two coders in parallel, then a
third; each coder calls the non-idempotent ``write`` (appends its line to EFFECTS).
Every agent's session lives in one CrashStore (tests/support/crash_child.py): the kill
points (``commit``, ``ack`` per journal append of any session of the tree, ``effect``
per write) are counted across the whole tree, in order. The agents run on one event loop
thread (``write`` is async), the store's group commits on its writer thread; the store's
gate holds a point until a group commit in progress has printed its ``DURABLE`` lines,
and keeps any later one from starting once the child stops at its point.

Usage: python crash_tree_child.py DB SESSION EFFECTS MODE ANSWERS TARGET (as crash_child.py)
Stdout: ``DURABLE ...``, ``ACK <seq> <kind> <session>``, ``AT ...``, ``RESULT <json>`` (as
crash_child.py).
"""

from __future__ import annotations

import os
from typing import Any

from crash_child import CrashStore, run_step

from tether import Agent, tool
from tether.agents import as_tool
from tether.models import ScriptedModel

PROMPT = "plan the work"
BATCHES = [[("k1", "G1"), ("k2", "G2")], [("k3", "G3")]]
"""The researcher's coder calls (call id, line), one model turn per batch."""
LINES = [line for batch in BATCHES for _, line in batch]
FINAL = "planner: researcher: coded G1 + coded G2 | coded G3"


def _turns(messages: list[Any]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


def coder_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return f"coded {messages[0].text}"
    return {"tool_calls": [{"id": "w1", "name": "write", "args": {"line": messages[0].text}}]}


def researcher_turn(messages: list[Any], specs: list[Any]) -> Any:
    turn = _turns(messages)
    if turn < len(BATCHES):
        calls = [{"id": c, "name": "coder", "args": {"task": line}} for c, line in BATCHES[turn]]
        return {"tool_calls": calls}
    done = [" + ".join(r.content for r in m.tool_results) for m in messages if m.role == "tool"]
    return "researcher: " + " | ".join(done)


def planner_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "planner: " + messages[-1].tool_results[0].content
    return {"tool_calls": [{"id": "p1", "name": "researcher", "args": {"task": "research"}}]}


def build(db: str, session_id: str, effects: str, target: int) -> Agent:
    store = CrashStore(db, target)

    @tool
    async def write(line: str) -> str:
        """Append a line to the effects file (not idempotent)."""
        # blocking on purpose: the loop runs nothing else meanwhile (deterministic points)
        with open(effects, "a", encoding="utf-8") as f:  # noqa: ASYNC230
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        store.point("effect", line)
        return f"wrote {line}"

    def coder() -> Agent:
        return Agent(model=ScriptedModel(coder_turn), tools=[write])

    def researcher() -> Agent:
        coders = as_tool(coder, name="coder", parallel=True)
        return Agent(model=ScriptedModel(researcher_turn), tools=[coders])

    return Agent(
        model=ScriptedModel(planner_turn),
        tools=[as_tool(researcher, name="researcher")],
        store=store,
        session_id=session_id,
    )


def main() -> None:
    run_step(build, PROMPT, history=False)


if __name__ == "__main__":
    main()
