"""The tether agent of bench/temporal.py: ``add`` once, then the answer (2 model calls, 1
tool call, no approval), on an instant scripted model."""

from __future__ import annotations

from typing import Any

from _temporal_harness import ANSWER, TOOL_ARGS

from tether import Agent, tool
from tether.models import ScriptedModel


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


def _script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
    if messages[-1].role == "tool":
        return {"text": ANSWER}
    return {"tool_calls": [{"name": "add", "args": dict(TOOL_ARGS)}]}


def agent_factory(session_id: str) -> Agent:
    return Agent(model=ScriptedModel(_script), tools=[add], session_id=session_id)
