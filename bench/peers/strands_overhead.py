"""Strands Agents runner (run with bench/.venvs/strands/bin/python).

Setup: `strands.Agent(model=FakeModel(), tools=[add], callback_handler=None)`,
everything else default (SlidingWindowConversationManager, concurrent tool
executor, default retry strategy, OTel API without an SDK, i.e. no-op spans).
`callback_handler=None` swaps the default PrintingCallbackHandler, which would
print to stdout, for Strands' null handler. FakeModel subclasses
`strands.models.Model`; Strands only calls `Model.stream`, so it yields the
minimal Bedrock-style stream events for each scripted reply. Callbacks:
`agent.add_hook` for BeforeModelCallEvent, BeforeToolCallEvent and
AfterToolCallEvent. Fresh conversation: `agent.messages = []`. Entry point:
`await agent.invoke_async(prompt)`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable
from importlib.metadata import version
from typing import Any

from _harness import ANSWER, COUNTS, PROMPT, TOOL_ARGS, Subject, main
from strands import Agent, tool
from strands.agent import AgentResult
from strands.hooks import AfterToolCallEvent, BeforeModelCallEvent, BeforeToolCallEvent
from strands.models import Model
from strands.types.content import Messages
from strands.types.streaming import StreamEvent

_TOOL_INPUT = json.dumps(TOOL_ARGS)


def _tool_use_events() -> list[StreamEvent]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"name": "add", "toolUseId": "call_1"}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": _TOOL_INPUT}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]


def _text_events() -> list[StreamEvent]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": ANSWER}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


class FakeModel(Model):
    """Instant scripted model: a tool call first, the answer once a tool result is in."""

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
        for event in _text_events() if answered else _tool_use_events():
            yield event


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


def _before_model(event: BeforeModelCallEvent) -> None:
    COUNTS.before_model += 1


def _before_tool(event: BeforeToolCallEvent) -> None:
    COUNTS.before_tool += 1


def _after_tool(event: AfterToolCallEvent) -> None:
    COUNTS.after_tool += 1


async def build(variant: str) -> Subject:
    agent = Agent(model=FakeModel(), tools=[add], callback_handler=None)
    agent.add_hook(_before_model, BeforeModelCallEvent)
    agent.add_hook(_before_tool, BeforeToolCallEvent)
    agent.add_hook(_after_tool, AfterToolCallEvent)

    def reset() -> None:
        agent.messages = []

    def text_of(result: AgentResult) -> str:
        assert result.stop_reason == "end_turn", result.stop_reason
        return str(result).strip()

    return Subject(
        name="Strands",
        version=f"strands-agents {version('strands-agents')}",
        invoke=lambda: agent.invoke_async(PROMPT),
        reset=reset,
        text_of=text_of,
        setup=(
            "strands.Agent(callback_handler=None) + Model subclass (stream events), "
            "@strands.tool, agent.add_hook x3, reset: agent.messages = []"
        ),
    )


if __name__ == "__main__":
    main(build)
