"""A small agent with recording tools, shared by the hook, intervention and middleware tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recording_script import Script

from tether import Agent, tool
from tether.models import ScriptedModel

TOOL_TURN = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


def make_agent(
    *turns: Any,
    runs: list[Any] | None = None,
    tools: Sequence[str] = ("add", "sub"),
    chunk_size: int | None = None,
    **kwargs: Any,
) -> tuple[Agent, Script]:
    """An agent with the named tools out of add / sub / secret; ``runs`` records every tool run.

    ``chunk_size`` is passed to the ScriptedModel when given (its own default otherwise).
    """
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

    @tool
    def secret() -> str:
        """Read the secret."""
        ran.append(("secret",))
        return "the-secret-is-42"

    available = {"add": add, "sub": sub, "secret": secret}
    script = kwargs.pop("script", None) or Script(*turns)
    model = (
        ScriptedModel(script)
        if chunk_size is None
        else ScriptedModel(script, chunk_size=chunk_size)
    )
    agent = Agent(model=model, tools=[available[name] for name in tools], **kwargs)
    return agent, script
