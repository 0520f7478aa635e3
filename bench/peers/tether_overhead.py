"""tether runner (run with the project's .venv python, where tether is installed).

Setup: `tether.Agent(model=ScriptedModel(script), tools=[add])` with
`agent.hooks.add` for BeforeModelCall, BeforeToolCall and AfterToolCall.
Fresh conversation: `agent.reset()`. Entry point: `await agent.invoke_async`.
Variant `sync` registers a plain `def add` instead of `async def add`; tether
runs sync tools in a thread pool, so that row shows the cost of the hop.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from _harness import ANSWER, COUNTS, PROMPT, TOOL_ARGS, Subject, main

from tether import Agent, tool
from tether.control import AfterToolCall, BeforeModelCall, BeforeToolCall
from tether.models import ScriptedModel


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


def _sync_add() -> Any:
    """The same tool as a plain `def` (named `add` too, so the script calls it)."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        COUNTS.tool_calls += 1
        return a + b

    return add


def script(messages: Any, tools: Any) -> dict[str, Any]:
    """Instant scripted model: a tool call first, the answer once a tool result is in."""
    COUNTS.model_calls += 1
    if messages[-1].role == "tool":
        return {"text": ANSWER}
    return {"tool_calls": [{"name": "add", "args": dict(TOOL_ARGS)}]}


def _before_model(event: BeforeModelCall) -> None:
    COUNTS.before_model += 1


def _before_tool(event: BeforeToolCall) -> None:
    COUNTS.before_tool += 1


def _after_tool(event: AfterToolCall) -> None:
    COUNTS.after_tool += 1


def _version() -> str:
    try:
        return f"tether {version('tether')}"
    except PackageNotFoundError:
        return "tether (not installed as a distribution)"


async def build(variant: str) -> Subject:
    if variant not in ("", "sync"):
        raise SystemExit(f"unknown variant {variant!r}")
    agent = Agent(model=ScriptedModel(script), tools=[_sync_add() if variant else add])
    agent.hooks.add(BeforeModelCall, _before_model)
    agent.hooks.add(BeforeToolCall, _before_tool)
    agent.hooks.add(AfterToolCall, _after_tool)

    def text_of(result: Any) -> str:
        assert result.stop_reason == "end_turn", result.stop_reason
        return str(result.text)

    kind = "sync def add (thread pool)" if variant else "async def add"
    return Subject(
        name=f"tether ({'sync' if variant else 'async'} tool)",
        version=_version(),
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=agent.reset,
        text_of=text_of,
        setup=f"tether.Agent + ScriptedModel, @tool {kind}, agent.hooks.add x3, agent.reset()",
    )


if __name__ == "__main__":
    main(build)
