"""The adapters against llm-katan (echo backend), a third-party server speaking OpenAI,
Anthropic and Bedrock wire formats.

The ``katan`` fixture is llm-katan started from its CLI (it calls the first tool
whenever tools are offered); ``katan_with(...)`` runs llm-katan's own app
in-process with one failure setting per instance (error rate, rate limit after
N requests, 504 after N, max in-flight, latency, key validation).
"""

from __future__ import annotations

import asyncio

import pytest

from tether import Agent, Limits, tool
from tether.control import BeforeModelCall, BeforeToolCall, Deny, InterventionHandler, Proceed
from tether.events import ModelFallback, ModelRetry, TextDelta
from tether.messages import Message
from tether.models import (
    AnthropicModel,
    BedrockModel,
    FallbackChain,
    OpenAIModel,
    ProviderError,
    RetryPolicy,
)
from tether.models.base import ModelRequest

ONCE = RetryPolicy(max_attempts=1, stale_timeout=20)
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
ANTHROPIC_HEADERS = {"x-api-key": "llm-katan-anthropic-key"}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def openai(url: str, **kwargs) -> OpenAIModel:
    kwargs.setdefault("api_key", "llm-katan-openai-key")
    kwargs.setdefault("retry", FAST)
    return OpenAIModel("echo-model", base_url=url + "/v1", **kwargs)


def anthropic(url: str, **kwargs) -> AnthropicModel:
    kwargs.setdefault("retry", FAST)
    return AnthropicModel(
        "echo-model",
        api_key="llm-katan-anthropic-key",
        base_url=url,
        default_headers=ANTHROPIC_HEADERS,
        **kwargs,
    )


def bedrock(url: str, **kwargs) -> BedrockModel:
    kwargs.setdefault("retry", FAST)
    return BedrockModel(
        "anthropic.claude-echo-v1:0",
        region="us-east-1",
        endpoint_url=url,
        aws_access_key_id="llm-katan-bedrock-key",
        aws_secret_access_key="x",
        **kwargs,
    )


async def text_of(model) -> str:
    events = [e async for e in model.stream(ModelRequest([Message.user("ping")], [], "sys"))]
    assert events[-1].stop_reason == "end_turn"
    return "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.parametrize("streaming", [True, False])
async def test_openai_text(katan, streaming):
    """llm-katan: Chat Completions text, streamed and whole."""
    assert "User: ping" in await text_of(openai(katan.url, streaming=streaming))


@pytest.mark.parametrize("streaming", [True, False])
async def test_anthropic_text(katan, streaming):
    """llm-katan: Messages text, streamed and whole (needs the x-api-key default header)."""
    assert "User: ping" in await text_of(anthropic(katan.url, streaming=streaming))


async def test_bedrock_converse_text(katan):
    """llm-katan: Bedrock Converse (non-streaming; its converse-stream is not AWS framing,
    see the fallback test below)."""
    assert "User: ping" in await text_of(bedrock(katan.url, streaming=False))


async def test_bedrock_converse_stream_is_a_format_error_and_the_chain_falls_back(katan):
    """llm-katan: its converse-stream is not AWS event-stream framing; botocore cannot decode
    it, so the call fails as format_error (not retried) and FallbackChain moves on."""
    primary = bedrock(katan.url)
    with pytest.raises(ProviderError, match="could not be decoded as AWS event-stream") as info:
        await text_of(primary)
    assert (info.value.reason.value, info.value.provider, info.value.attempts) == (
        "format_error",
        primary.name,
        1,
    )
    chain = FallbackChain([bedrock(katan.url), openai(katan.url)])
    events = [e async for e in chain.stream(ModelRequest([Message.user("ping")], [], "sys"))]
    [fallback] = [e for e in events if isinstance(e, ModelFallback)]
    assert (fallback.from_model, fallback.reason) == (primary.name, "format_error")
    assert "User: ping" in "".join(e.text for e in events if isinstance(e, TextDelta))


class SecondCallDenied(InterventionHandler):
    """Lets the first tool call run and denies the next ones."""

    def __init__(self) -> None:
        self.seen = 0

    def before_tool_call(self, event: BeforeToolCall) -> Proceed | Deny:
        self.seen += 1
        return Proceed() if self.seen == 1 else Deny("one addition is enough")


@pytest.mark.parametrize(
    "make",
    [
        lambda url: openai(url),  # llm-katan answers a streamed tool request with whole JSON
        lambda url: openai(url, streaming=False),
        lambda url: anthropic(url),
        lambda url: bedrock(url, streaming=False),
    ],
    ids=["openai", "openai-whole", "anthropic", "bedrock"],
)
async def test_agent_loop_tool_round_trip_with_hook_and_intervention(katan, make):
    """llm-katan: the full loop over each adapter: tool call, tool result sent back, a hook
    on every model call, an intervention denying the second call; two turns at most."""
    policy = SecondCallDenied()
    agent = Agent(
        model=make(katan.url), tools=[add], interventions=[policy], limits=Limits(turns=2)
    )
    model_calls = []
    agent.hooks.add(BeforeModelCall, lambda event: model_calls.append(len(event.messages)))
    result = await agent.invoke_async("add one and one")
    assert result.stop_reason == "limit_turns"
    assert model_calls == [1, 3]  # the second call saw the tool call and its result
    first, second = agent.messages[2].tool_results[0], agent.messages[4].tool_results[0]
    assert (first.content, first.is_error) == ("2", False)  # katan's dummy args: a=1, b=1
    assert (second.status, "one addition is enough" in second.content) == ("denied", True)
    assert result.usage.tool_calls == 1  # the denied call never ran


async def test_error_400_is_a_format_error(katan):
    """llm-katan: Anthropic route rejects an empty message list with 400."""
    with pytest.raises(ProviderError) as info:
        [e async for e in anthropic(katan.url).stream(ModelRequest([], []))]
    assert (info.value.reason.value, info.value.status, info.value.attempts) == (
        "format_error",
        400,
        1,
    )
    assert "at least one message" in str(info.value)


async def test_error_401_rotates_to_the_valid_key(katan_with):
    """llm-katan (in-process, --validate-keys): a wrong key gets 401, the second key works."""
    server = katan_with(validate_keys=True)
    model = openai(server.url, api_key=None, api_keys=["wrong-key", "llm-katan-openai-key"])
    events = [e async for e in model.stream(ModelRequest([Message.user("x")], []))]
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["auth"]
    with pytest.raises(ProviderError, match=r"auth, HTTP 401.*OPENAI_API_KEY"):
        await text_of(openai(server.url, api_key="wrong-key"))


@pytest.mark.parametrize(
    ("settings", "warmups", "reason", "status"),
    [
        ({"error_rate": 1.0}, 0, "server_error", 500),
        ({"rate_limit_after": 1}, 1, "rate_limit", 429),
        ({"timeout_after": 1}, 1, "timeout", 504),
    ],
)
async def test_errors_500_429_504_are_classified_and_retried(
    katan_with, settings, warmups, reason, status
):
    """llm-katan (in-process, one instance per failure setting): 500, 429, 504."""
    server = katan_with(**settings)
    for _ in range(warmups):
        await text_of(openai(server.url))
    model = openai(
        server.url, retry=RetryPolicy(max_attempts=2, base_delay=0.001, stale_timeout=20)
    )
    with pytest.raises(ProviderError) as info:
        await text_of(model)
    assert (info.value.reason.value, info.value.status, info.value.attempts) == (reason, status, 2)


async def test_error_503_when_over_max_inflight(katan_with):
    """llm-katan (in-process, max_inflight=1, latency 300 ms): a concurrent request gets 503."""
    server = katan_with(max_inflight=1, latency_ms=300)
    results = await asyncio.gather(
        text_of(anthropic(server.url, retry=ONCE)),
        text_of(anthropic(server.url, retry=ONCE)),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, ProviderError)]
    assert len(errors) == 1
    assert (errors[0].reason.value, errors[0].status) == ("overloaded", 503)


async def test_client_timeout_is_a_timeout(katan_with):
    """llm-katan (in-process, latency 2 s): the SDK timeout (0.3 s) is classified as timeout."""
    server = katan_with(latency_ms=2000)
    with pytest.raises(ProviderError, match="timeout, no HTTP status") as info:
        await text_of(openai(server.url, timeout=0.3, retry=ONCE))
    assert info.value.reason.value == "timeout"
