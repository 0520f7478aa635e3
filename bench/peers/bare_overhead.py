"""Baseline: a minimal typed agent loop in plain asyncio, no framework.

Same workload as the framework runners: one agent object reused, a fresh
conversation each invocation, an instant fake model (2 calls), one
`async def add` tool, and 3 no-op callbacks (before model call, before tool
call, after tool call) dispatched through a small typed registry.
"""

from __future__ import annotations

import platform
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from _harness import ANSWER, COUNTS, PROMPT, TOOL_ARGS, Subject, main


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    args: dict[str, Any]


@dataclass(slots=True)
class Message:
    role: Literal["user", "assistant", "tool"]
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass(slots=True)
class Result:
    text: str
    stop_reason: str


@dataclass(slots=True)
class BeforeModelCall:
    messages: list[Message]


@dataclass(slots=True)
class BeforeToolCall:
    call: ToolCall


@dataclass(slots=True)
class AfterToolCall:
    call: ToolCall
    result: object


Event = BeforeModelCall | BeforeToolCall | AfterToolCall
Tool = Callable[..., Awaitable[object]]


class FakeModel:
    """Instant scripted model: a tool call first, the answer once a tool result is in."""

    async def complete(self, messages: list[Message]) -> Message:
        COUNTS.model_calls += 1
        if messages[-1].role == "tool":
            return Message("assistant", text=ANSWER)
        return Message("assistant", tool_calls=[ToolCall("call_1", "add", dict(TOOL_ARGS))])


class BareAgent:
    """The loop: model -> tool calls -> model, with typed callbacks around each step."""

    def __init__(self, model: FakeModel, tools: list[Tool]) -> None:
        self.model = model
        self.tools = {t.__name__: t for t in tools}
        self.messages: list[Message] = []
        self._hooks: dict[type[Event], list[Callable[[Any], None]]] = {}

    def add_hook(self, event: type[Event], fn: Callable[[Any], None]) -> None:
        self._hooks.setdefault(event, []).append(fn)

    def _emit(self, event: Event) -> None:
        for fn in self._hooks.get(type(event), ()):
            fn(event)

    def reset(self) -> None:
        self.messages = []

    async def invoke(self, prompt: str) -> Result:
        messages = self.messages
        messages.append(Message("user", text=prompt))
        while True:
            self._emit(BeforeModelCall(messages))
            reply = await self.model.complete(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return Result(reply.text, "end_turn")
            for call in reply.tool_calls:
                self._emit(BeforeToolCall(call))
                value = await self.tools[call.name](**call.args)
                self._emit(AfterToolCall(call, value))
                messages.append(Message("tool", text=str(value), tool_call_id=call.id))


async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


def _before_model(event: BeforeModelCall) -> None:
    COUNTS.before_model += 1


def _before_tool(event: BeforeToolCall) -> None:
    COUNTS.before_tool += 1


def _after_tool(event: AfterToolCall) -> None:
    COUNTS.after_tool += 1


async def build(variant: str) -> Subject:
    agent = BareAgent(FakeModel(), [add])
    agent.add_hook(BeforeModelCall, _before_model)
    agent.add_hook(BeforeToolCall, _before_tool)
    agent.add_hook(AfterToolCall, _after_tool)

    def text_of(result: Result) -> str:
        assert result.stop_reason == "end_turn", result.stop_reason
        return result.text

    return Subject(
        name="bare asyncio",
        version=f"python {platform.python_version()}",
        invoke=lambda: agent.invoke(PROMPT),
        reset=agent.reset,
        text_of=text_of,
        setup="hand-written loop (dataclass messages/events), async fake model, dict hook registry",
    )


if __name__ == "__main__":
    main(build)
