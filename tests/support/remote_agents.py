"""Callers of a remote A2A agent for the RemoteAgent tests: an Agent whose model calls the
remote tool once with a task and then answers with what the tool returned."""

from __future__ import annotations

from typing import Any

from tether import Agent
from tether.a2a import RemoteAgent
from tether.messages import Message


def script(task: str, tool: str = "painter") -> Any:
    """The caller's model: call ``tool`` with ``task``; then say what it returned."""

    def turn(messages: list[Message], specs: list[dict[str, Any]]) -> Any:
        last = messages[-1]
        if last.role == "tool":
            result = last.tool_results[0]
            return f"caller got ({result.status}): {result.content}"
        return {"tool_calls": [{"name": tool, "args": {"task": task}, "id": "c1"}]}

    return turn


def caller(url: str, task: str, **options: Any) -> Agent:
    from tether.models import ScriptedModel

    return Agent(model=ScriptedModel(script(task)), tools=[RemoteAgent(url)], **options)
