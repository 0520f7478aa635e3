"""Strands runner of the sub-agent benchmark (bench/.venvs/strands/bin/python).

Strands' agents-as-tools pattern: the child is a ``strands.Agent`` and the parent's
tool is an ``@tool async def helper(task)`` that resets the child's messages (a fresh
conversation per call, as tether's as_tool does) and returns
``str(await child.invoke_async(task))``. Both use a ``strands.models.Model`` subclass
yielding Bedrock-style stream events (instant, scripted). ``callback_handler=None``
on both agents. Fresh parent conversation: ``agent.messages = []``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable
from importlib.metadata import version
from typing import Any

from _subagent_harness import ANSWER, CHILD_ANSWER, COUNTS, PROMPT, TASK, TOOL_ARGS, Subject, main
from strands import Agent, tool
from strands.agent import AgentResult
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent


def _tool_use(name: str, args: dict[str, Any]) -> list[StreamEvent]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": "call_1"}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]


def _text(text: str) -> list[StreamEvent]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


class FakeModel(Model):
    """Instant scripted model: call ``tool_name`` first, answer once a tool result is in."""

    def __init__(self, tool_name: str, args: dict[str, Any], answer: str) -> None:
        self.tool_name, self.args, self.answer = tool_name, args, answer

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        raise NotImplementedError("not used by this benchmark")

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        COUNTS.model_calls += 1
        answered = any("toolResult" in block for block in messages[-1]["content"])
        events = _text(self.answer) if answered else _tool_use(self.tool_name, self.args)
        for event in events:
            yield event


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


async def build(variant: str) -> Subject:
    if variant == "plain":
        agent = Agent(model=FakeModel("add", TOOL_ARGS, ANSWER), tools=[add], callback_handler=None)
    else:
        child = Agent(
            model=FakeModel("add", TOOL_ARGS, CHILD_ANSWER), tools=[add], callback_handler=None
        )

        @tool
        async def helper(task: str) -> str:
            """Adds numbers.

            Args:
                task: The task for the helper agent.
            """
            child.messages = []
            return str(await child.invoke_async(task)).strip()

        agent = Agent(
            model=FakeModel("helper", {"task": TASK}, ANSWER), tools=[helper], callback_handler=None
        )

    def reset() -> None:
        agent.messages = []

    def text_of(result: AgentResult) -> str:
        return str(result).strip()

    return Subject(
        name="Strands",
        version=f"strands-agents {version('strands-agents')}",
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=reset,
        text_of=text_of,
        setup="strands.Agent + Model subclass; delegate: @tool wrapping child.invoke_async",
    )


if __name__ == "__main__":
    main(build)
