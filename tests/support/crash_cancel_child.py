"""A two-deep agent tree in a child process, cancelled from its leaf's tool, that
tests/agents/test_cancel_tree.py kills with SIGKILL at every journal point of the run.

top -> mid -> leaf (Agent objects as tools); the leaf's tool cancels the top
(``top.cancel()``, as an operator would) and waits to be cancelled, so every point after
the leaf's intent is on the cancel path: the children's ends are journaled as the cancel
reaches them. Kill points and stdout as crash_child.py (one CrashStore for the tree).

Usage: python crash_cancel_child.py DB SESSION EFFECTS MODE ANSWERS TARGET
"""

from __future__ import annotations

import asyncio
from typing import Any

from crash_child import CrashStore, run_step

from tether import Agent, tool
from tether.models import ScriptedModel

PROMPT = "start the tree"


def calling(name: str, args: dict[str, Any]) -> ScriptedModel:
    """Calls ``name`` once, then answers with its result."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return f"{name}: {messages[-1].tool_results[0].content}"
        return {"tool_calls": [{"id": f"{name}1", "name": name, "args": args}]}

    return ScriptedModel(turn)


def build(db: str, session_id: str, effects: str, target: int) -> Agent:
    store = CrashStore(db, target)
    agents: list[Agent] = []

    @tool(idempotent=True)  # a recovery re-runs it (and so cancels again), never in doubt
    async def wait_long() -> str:
        """Cancel the tree, then wait to be cancelled."""
        with open(effects, "a", encoding="utf-8") as f:  # noqa: ASYNC230
            f.write(f"{store.points}\n")  # the kill points before the cancel
        agents[0].cancel()
        await asyncio.sleep(30)
        return "waited"

    leaf = Agent(calling("wait_long", {}), tools=[wait_long], name="leaf")
    mid = Agent(calling("leaf", {"task": "t"}), tools=[leaf.as_tool("leaf")], name="mid")
    top = Agent(
        calling("mid", {"task": "t"}),
        tools=[mid.as_tool("mid")],
        store=store,
        session_id=session_id,
    )
    agents.append(top)
    return top


def main() -> None:
    run_step(build, PROMPT, history=False)


if __name__ == "__main__":
    main()
