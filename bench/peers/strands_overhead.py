"""Strands Agents runner (run with bench/.venvs/strands/bin/python).

Setup: `strands.Agent(model=Scripted(), tools=[add], callback_handler=None)`,
everything else default (SlidingWindowConversationManager, concurrent tool
executor, default retry strategy, OTel API without an SDK, i.e. no-op spans).
`callback_handler=None` swaps the default PrintingCallbackHandler, which would
print to stdout, for Strands' null handler. Scripted subclasses
`strands.models.Model` (through _strands_fake.FakeModel); Strands only calls
`Model.stream`, so it yields the minimal Bedrock-style stream events for each
scripted reply. Callbacks:
`agent.add_hook` for BeforeModelCallEvent, BeforeToolCallEvent and
AfterToolCallEvent. Fresh conversation: `agent.messages = []`. Entry point:
`await agent.invoke_async(prompt)`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from typing import Any

from _harness import ANSWER, COUNTS, TOOL_ARGS, Subject, main
from _strands_fake import FakeModel, add_tool, answered, subject, text_events, tool_use_events
from strands import Agent
from strands.agent import AgentResult
from strands.hooks import AfterToolCallEvent, BeforeModelCallEvent, BeforeToolCallEvent
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

_TOOL_INPUT = json.dumps(TOOL_ARGS)


class Scripted(FakeModel):
    """Instant scripted model: a tool call first, the answer once a tool result is in."""

    async def stream(
        self, messages: Messages, *args: Any, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        COUNTS.model_calls += 1
        events = text_events(ANSWER) if answered(messages) else tool_use_events("add", _TOOL_INPUT)
        for event in events:
            yield event


add = add_tool(COUNTS)


def _before_model(event: BeforeModelCallEvent) -> None:
    COUNTS.before_model += 1


def _before_tool(event: BeforeToolCallEvent) -> None:
    COUNTS.before_tool += 1


def _after_tool(event: AfterToolCallEvent) -> None:
    COUNTS.after_tool += 1


async def build(variant: str) -> Subject:
    agent = Agent(model=Scripted(), tools=[add], callback_handler=None)
    agent.add_hook(_before_model, BeforeModelCallEvent)
    agent.add_hook(_before_tool, BeforeToolCallEvent)
    agent.add_hook(_after_tool, AfterToolCallEvent)

    def text_of(result: AgentResult) -> str:
        assert result.stop_reason == "end_turn", result.stop_reason
        return str(result).strip()

    return subject(
        agent,
        text_of,
        "strands.Agent(callback_handler=None) + Model subclass (stream events), "
        "@strands.tool, agent.add_hook x3, reset: agent.messages = []",
    )


if __name__ == "__main__":
    main(build)
