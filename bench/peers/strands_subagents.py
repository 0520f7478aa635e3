"""Strands runner of the sub-agent benchmark (bench/.venvs/strands/bin/python).

Strands' agents-as-tools pattern: the child is a ``strands.Agent`` and the parent's
tool is an ``@tool async def helper(task)`` that resets the child's messages (a fresh
conversation per call, as tether's as_tool does) and returns
``str(await child.invoke_async(task))``. Both use a ``strands.models.Model`` subclass
(on _strands_fake.FakeModel) yielding Bedrock-style stream events (instant, scripted).
``callback_handler=None`` on both agents. Fresh parent conversation: ``agent.messages = []``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any

from _strands_fake import FakeModel, add_tool, answered, subject, text_events, tool_use_events
from _subagent_harness import ANSWER, CHILD_ANSWER, COUNTS, TASK, TOOL_ARGS, Subject, main
from strands import Agent, tool
from strands.agent import AgentResult
from strands.types.content import Messages
from strands.types.streaming import StreamEvent


class Scripted(FakeModel):
    """Instant scripted model: call ``tool_name`` first, answer once a tool result is in."""

    def __init__(self, tool_name: str, args: dict[str, Any], answer: str) -> None:
        self.tool_name, self.args, self.answer = tool_name, args, answer

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        COUNTS.model_calls += 1
        if answered(messages):
            events = text_events(self.answer)
        else:
            events = tool_use_events(self.tool_name, json.dumps(self.args))
        for event in events:
            yield event


add = add_tool(COUNTS)


async def build(variant: str) -> Subject:
    if variant == "plain":
        agent = Agent(model=Scripted("add", TOOL_ARGS, ANSWER), tools=[add], callback_handler=None)
    else:
        child = Agent(
            model=Scripted("add", TOOL_ARGS, CHILD_ANSWER), tools=[add], callback_handler=None
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
            model=Scripted("helper", {"task": TASK}, ANSWER), tools=[helper], callback_handler=None
        )

    def text_of(result: AgentResult) -> str:
        return str(result).strip()

    return subject(
        agent,
        text_of,
        "strands.Agent + Model subclass; delegate: @tool wrapping child.invoke_async",
    )


if __name__ == "__main__":
    main(build)
