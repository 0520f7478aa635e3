"""tether runner of the sub-agent benchmark (the project's python).

plain: ``Agent(model=ScriptedModel(...), tools=[add])``. delegate: the parent's tool is
``child.as_tool("helper", ...)`` of ``Agent(model=ScriptedModel(...), tools=[add])``
(each call a fresh child session, policy/budget binding included). No store, no
hooks. Fresh conversation: ``parent.reset()``. Entry point: ``await invoke_async``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from _subagent_harness import ANSWER, CHILD_ANSWER, COUNTS, PROMPT, TASK, TOOL_ARGS, Subject, main

from tether import Agent, tool
from tether.models import ScriptedModel


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


def _script(tool_name: str, args: dict[str, Any], answer: str) -> Any:
    def turn(messages: Any, specs: Any) -> dict[str, Any]:
        COUNTS.model_calls += 1
        if messages[-1].role == "tool":
            return {"text": answer}
        return {"tool_calls": [{"name": tool_name, "args": dict(args)}]}

    return turn


async def build(variant: str) -> Subject:
    if variant == "plain":
        agent = Agent(model=ScriptedModel(_script("add", TOOL_ARGS, ANSWER)), tools=[add])
    else:
        child = Agent(model=ScriptedModel(_script("add", TOOL_ARGS, CHILD_ANSWER)), tools=[add])
        helper = child.as_tool("helper", "Adds numbers")
        agent = Agent(
            model=ScriptedModel(_script("helper", {"task": TASK}, ANSWER)), tools=[helper]
        )
    try:
        v = version("tether")
    except PackageNotFoundError:
        v = "source"
    return Subject(
        name="tether",
        version=f"tether {v}",
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=agent.reset,
        text_of=lambda r: r.text,
        setup="Agent + ScriptedModel; delegate: child.as_tool('helper')",
    )


if __name__ == "__main__":
    main(build)
