"""Microsoft Agent Framework runner (run with bench/.venvs/maf/bin/python).

Setup: `agent_framework.Agent(client=FakeChatClient(), tools=[add],
middleware=[...])`. FakeChatClient stacks the same layers as MAF's shipped
clients (FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer over
BaseChatClient; e.g. OpenAIChatCompletionClient) and implements only the
non-streaming `_inner_get_response`, because `await agent.run(prompt)` (MAF's
async entry point without `stream=True`) does not stream. It skips
`_validate_options` (provider-side work). Instrumentation is left at MAF's
default (on, through the OTel API; no tracer provider is configured, so spans
are non-recording), as Strands' is. Callbacks: MAF's equivalent of hooks is
middleware, class-based (the cheaper form: function middleware is re-inspected
with inspect.signature on every run): one ChatMiddleware (before the model
call) and one FunctionMiddleware (before and after the tool call), i.e. 3
callback points in 2 middleware.
Fresh conversation: MAF is stateless unless given a session, so the default
variant passes none (nothing to reset); variant `session` passes a new
`agent.create_session()` each time (in-memory history provider).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from importlib.metadata import version
from typing import Any

from _harness import ANSWER, COUNTS, PROMPT, TOOL_ARGS, Subject, main
from agent_framework import (
    Agent,
    AgentResponse,
    BaseChatClient,
    ChatContext,
    ChatMiddleware,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationContext,
    FunctionInvocationLayer,
    FunctionMiddleware,
    Message,
    tool,
)
from agent_framework.observability import ChatTelemetryLayer


class FakeChatClient(
    FunctionInvocationLayer[Any],
    ChatMiddlewareLayer[Any],
    ChatTelemetryLayer[Any],
    BaseChatClient[Any],
):
    """Instant scripted chat client: a tool call first, the answer after a tool result."""

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kw: Any
    ) -> Awaitable[ChatResponse]:
        if stream:
            raise NotImplementedError("this benchmark runs MAF's non-streaming path")
        return self._respond(messages)

    async def _respond(self, messages: Sequence[Message]) -> ChatResponse:
        COUNTS.model_calls += 1
        if messages[-1].role == "tool":
            return ChatResponse(
                messages=[Message(role="assistant", contents=[Content.from_text(ANSWER)])],
                finish_reason="stop",
            )
        call = Content.from_function_call(call_id="call_1", name="add", arguments=dict(TOOL_ARGS))
        return ChatResponse(
            messages=[Message(role="assistant", contents=[call])], finish_reason="tool_calls"
        )


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    COUNTS.tool_calls += 1
    return a + b


class BeforeModel(ChatMiddleware):
    """No-op callback before each model call."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        COUNTS.before_model += 1
        await call_next()


class AroundTool(FunctionMiddleware):
    """No-op callbacks before and after each tool call."""

    async def process(
        self, context: FunctionInvocationContext, call_next: Callable[[], Awaitable[None]]
    ) -> None:
        COUNTS.before_tool += 1
        await call_next()
        COUNTS.after_tool += 1


async def build(variant: str) -> Subject:
    agent = Agent(client=FakeChatClient(), tools=[add], middleware=[BeforeModel(), AroundTool()])
    if variant == "session":
        invoke = lambda: agent.run(PROMPT, session=agent.create_session())  # noqa: E731
        how = "a new agent.create_session() per run"
    elif not variant:
        invoke = lambda: agent.run(PROMPT)  # noqa: E731
        how = "no session (stateless run)"
    else:
        raise SystemExit(f"unknown variant {variant!r}")

    def text_of(response: AgentResponse) -> str:
        assert response.finish_reason in (None, "stop"), response.finish_reason
        return response.text

    return Subject(
        name="MAF" + (" (session per run)" if variant else ""),
        version=f"agent-framework-core {version('agent-framework-core')}",
        invoke=invoke,
        reset=lambda: None,
        text_of=text_of,
        setup=(
            "agent_framework.Agent + BaseChatClient subclass with FunctionInvocation/"
            "ChatMiddleware/ChatTelemetry layers (non-streaming), @tool, 1 chat + 1 "
            f"function middleware; fresh conversation: {how}"
        ),
    )


if __name__ == "__main__":
    main(build)
