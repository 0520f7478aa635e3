"""A small agent with two recording tools, shared by the hook and intervention tests."""

from __future__ import annotations

from typing import Any

from recording_script import Script

from tether import Agent, tool
from tether.models import ScriptedModel

TOOL_TURN = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


def make_agent(*turns: Any, runs: list[Any] | None = None, **kwargs: Any) -> tuple[Agent, Script]:
    """An agent with the tools add / sub / counter; ``runs`` records every tool run."""
    ran = runs if runs is not None else []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        ran.append(("add", a, b))
        return a + b

    @tool
    def sub(a: int, b: int) -> int:
        """Subtract."""
        ran.append(("sub", a, b))
        return a - b

    script = kwargs.pop("script", None) or Script(*turns)
    agent = Agent(model=ScriptedModel(script), tools=[add, sub], **kwargs)
    return agent, script
