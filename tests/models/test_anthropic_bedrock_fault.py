"""AnthropicModel and BedrockModel against the project's fault server.

Anthropic: documented SSE events (thinking + signature, tool input fragments,
usage only in message_start/message_delta, error events) and error bodies.
Bedrock: ConverseStream in AWS's binary event-stream framing, exception events,
and Converse error responses with x-amzn-ErrorType.
"""

from __future__ import annotations

import itertools

import pytest
from fault_models import bedrock_at, claude_at

from tether import Agent, tool
from tether.events import ModelFallback, ModelRetry, TextDelta
from tether.messages import Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from tether.models import (
    AnthropicModel,
    BedrockModel,
    FallbackChain,
    OpenAIModel,
    ProviderError,
    RetryPolicy,
)
from tether.models.assembler import ResponseAssembler
from tether.models.base import ModelRequest

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def claude(fault, plan: str, **kwargs) -> AnthropicModel:
    return claude_at(fault, plan, retry=FAST, **kwargs)


def bedrock(fault, plan: str, **kwargs) -> BedrockModel:
    return bedrock_at(fault, plan, retry=FAST, **kwargs)


REQUEST = ModelRequest([Message.user("hi")], [add.spec()], "sys")


async def assemble(model, req=REQUEST):
    assembler = ResponseAssembler()
    events = [e async for e in model.stream(req)]
    for event in events:
        assembler.add(event)
    return assembler.finish(), events


async def test_anthropic_thinking_with_signature_and_usage_from_start_and_delta(fault):
    """Fault server: thinking_delta + signature_delta, text; usage split over two events."""
    response, _ = await assemble(claude(fault, "thinking"))
    assert response.message.content[0] == ReasoningBlock("let me see", signature="sig123")
    assert response.message.text == "Done"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (21, 9)


async def test_anthropic_tool_use_fragments(fault):
    """Fault server: tool_use block with input_json_delta fragments, stop_reason tool_use."""
    response, _ = await assemble(claude(fault, "tools"))
    assert response.message.text == "Calling."
    assert response.tool_calls == [ToolCall("toolu_1", "add", {"a": 4, "b": 5})]
    assert response.stop_reason == "tool_use"


async def test_anthropic_request_layout(fault):
    """Fault server (recorded request): tool results in a user message, merged with user text.
    (Cache breakpoints, on by default, are checked in tests/context/test_caching.py.)"""
    model = claude(fault, "text", prompt_cache=False)
    history = [
        Message.user("hi"),
        Message(
            "assistant",
            [ReasoningBlock("t", signature="s"), TextBlock("x"), ToolCall("t1", "add", {"a": 1})],
        ),
        Message("tool", [ToolResult("t1", "add", "oops", is_error=True)]),
        Message.user("and now?"),
    ]
    await assemble(model, ModelRequest(history, [add.spec()], "sys"))
    body = fault.app.state.recorder.for_model(model.model)[-1]["body"]
    assert body["system"] == "sys"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "t",
        "signature": "s",
    }
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "oops", "is_error": True},
        {"type": "text", "text": "and now?"},
    ]
    assert body["tools"][0]["input_schema"]["required"] == ["a", "b"]


async def test_anthropic_529_overloaded_is_retried(fault):
    """Fault server: 529 overloaded_error, then a normal stream."""
    _, events = await assemble(claude(fault, "e529,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["overloaded"]


async def test_anthropic_error_event_mid_stream_fails_after_output(fault):
    """Fault server: an SSE 'error' event after text was delivered: no retry, clear error."""
    with pytest.raises(ProviderError, match="broke after part of the response") as info:
        await assemble(claude(fault, "mid_error,text"))
    assert info.value.reason.value == "overloaded"


async def test_anthropic_error_event_before_output_is_retried(fault):
    """Fault server: an SSE 'error' event right after message_start."""
    _, events = await assemble(claude(fault, "early_error,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["overloaded"]


async def test_anthropic_rejected_thinking_signature_drops_reasoning_and_retries(fault):
    """Fault server: 400 'Invalid signature in thinking block'; the retry carries no thinking."""
    model = claude(fault, "esig,text")
    history = [
        Message.user("q"),
        Message("assistant", [ReasoningBlock("r", signature="bad"), TextBlock("a")]),
        Message.user("q2"),
    ]
    _, events = await assemble(model, ModelRequest(history, []))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["thinking_signature"]
    first, second = fault.app.state.recorder.for_model(model.model)
    assert first["body"]["messages"][1]["content"][0]["type"] == "thinking"
    assert second["body"]["messages"][1]["content"] == [{"type": "text", "text": "a"}]


@pytest.mark.parametrize(
    ("plan", "reason", "status"),
    [
        ("ectx", "context_overflow", 400),
        ("elong", "long_context_tier", 429),
        ("e413", "payload_too_large", 413),
        ("e404", "model_not_found", 404),
    ],
)
async def test_anthropic_permanent_errors(fault, plan, reason, status):
    """Fault server: Anthropic's documented error bodies that abort at once."""
    with pytest.raises(ProviderError) as info:
        await assemble(claude(fault, plan))
    assert (info.value.reason.value, info.value.status, info.value.attempts) == (reason, status, 1)


async def test_anthropic_refusal_stops_the_agent_as_blocked(fault):
    """Fault server: stop_reason 'refusal' maps to content_filter, which the loop reports as blocked."""
    result = await Agent(model=claude(fault, "refusal")).invoke_async("hi")
    assert result.stop_reason == "blocked"


async def test_bedrock_binary_event_stream_text(fault):
    """Fault server: ConverseStream text in AWS event-stream framing, usage in metadata."""
    response, events = await assemble(bedrock(fault, "text"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    assert (response.message.text, response.usage.input_tokens, response.usage.output_tokens) == (
        "Hello",
        13,
        5,
    )


async def test_bedrock_stream_tool_use_and_reasoning(fault):
    """Fault server: reasoningContent deltas with a signature and toolUse input fragments."""
    response, _ = await assemble(bedrock(fault, "tools"))
    assert response.message.content[0] == ReasoningBlock("thinking hard", signature="sigB")
    assert response.tool_calls == [ToolCall("tu_1", "add", {"a": 6, "b": 7})]


async def test_bedrock_request_layout(fault):
    """Fault server (recorded request): Converse messages, toolResult status, toolConfig."""
    model = bedrock(fault, "text")
    history = [
        Message.user("hi"),
        Message("assistant", [ToolCall("t1", "add", {"a": 1})]),
        Message("tool", [ToolResult("t1", "add", "2")]),
    ]
    await assemble(model, ModelRequest(history, [add.spec()], "sys"))
    body = fault.app.state.recorder.for_model(model.model)[-1]["body"]
    assert body["system"] == [{"text": "sys"}]
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "t1", "content": [{"text": "2"}], "status": "success"}}
    ]
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "add"


async def test_bedrock_throttling_retried_and_exception_event_before_output(fault):
    """Fault server: a 429 ThrottlingException, and a throttlingException event in the stream."""
    _, events = await assemble(bedrock(fault, "ethrottle,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["rate_limit"]
    _, events = await assemble(bedrock(fault, "early_exc,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["rate_limit"]


async def test_bedrock_exception_event_after_output_fails_clearly(fault):
    """Fault server: modelStreamErrorException after text was delivered."""
    with pytest.raises(ProviderError, match="ModelStreamErrorException") as info:
        await assemble(bedrock(fault, "mid_exc"))
    assert info.value.partial


@pytest.mark.parametrize(
    ("plan", "reason"),
    [("ectx", "context_overflow"), ("e404", "model_not_found"), ("e403", "auth_permanent")],
)
async def test_bedrock_permanent_errors(fault, plan, reason):
    """Fault server: Converse error responses (x-amzn-ErrorType) that abort at once."""
    with pytest.raises(ProviderError) as info:
        await assemble(bedrock(fault, plan))
    assert (info.value.reason.value, info.value.attempts) == (reason, 1)


async def test_bedrock_guardrail_is_a_content_filter_stop(fault):
    """Fault server: stopReason guardrail_intervened."""
    response, _ = await assemble(bedrock(fault, "guardrail"))
    assert response.stop_reason == "content_filter"


# -- undecodable streams are provider failures (FallbackChain falls back) ----------------


def healthy(fault) -> OpenAIModel:
    return OpenAIModel(f"text~{next(_tags)}", base_url=fault.url + "/v1", api_key="k", retry=FAST)


async def fallback_of(chain: FallbackChain) -> tuple[str, ModelFallback]:
    response, events = await assemble(chain)
    [fallback] = [e for e in events if isinstance(e, ModelFallback)]
    return response.message.text, fallback


async def test_bedrock_stream_without_event_stream_framing_is_a_format_error(fault):
    """Fault server: ConverseStream answers one JSON body; botocore's decoder fails."""
    primary = bedrock(fault, "unframed")
    with pytest.raises(ProviderError, match="could not be decoded") as info:
        await assemble(primary)
    error = info.value
    assert (error.reason.value, error.provider, error.attempts) == ("format_error", primary.name, 1)
    assert "ChecksumMismatch" in str(error)
    assert not error.partial
    primary = bedrock(fault, "unframed")
    text, fallback = await fallback_of(FallbackChain([primary, healthy(fault)]))
    assert text == "Hello world"
    assert (fallback.from_model, fallback.reason) == (primary.name, "format_error")
    assert len(fault.app.state.recorder.for_model(primary.model)) == 1  # not retried


async def test_anthropic_stream_of_the_wrong_shape_is_a_provider_error(fault):
    """Fault server: a content_block_delta whose delta is a number, not an object."""
    primary = claude(fault, "garbage")
    with pytest.raises(ProviderError, match=r"unknown, no HTTP status\) after 3 attempt") as info:
        await assemble(primary)
    assert (info.value.provider, info.value.attempts) == (primary.name, 3)
    assert "AttributeError" in str(info.value)
    primary = claude(fault, "garbage")
    text, fallback = await fallback_of(FallbackChain([primary, healthy(fault)]))
    assert text == "Hello world"
    assert (fallback.from_model, fallback.reason) == (primary.name, "unknown")
