"""Prompt caching on the wire (Anthropic cache_control, Bedrock cachePoint) and cache usage."""

from __future__ import annotations

import itertools
from typing import Any

from tether import Agent, tool
from tether.models import AnthropicModel, BedrockModel, OpenAIModel, RetryPolicy

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()
EPHEMERAL = {"type": "ephemeral"}
POINT = {"cachePoint": {"type": "default"}}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def sub(a: int, b: int) -> int:
    """Subtract."""
    return a - b


def _body(fault: Any, model: Any) -> dict[str, Any]:
    return fault.app.state.recorder.for_model(model.model)[-1]["body"]


def test_anthropic_marks_system_tools_and_the_conversation_end(fault: Any) -> None:
    model = AnthropicModel(f"cached~c{next(_tags)}", api_key="k", base_url=fault.url, retry=FAST)
    agent = Agent(model, tools=[add, sub], system_prompt="You add.", store=None)
    result = agent("what is 1+2?")
    body = _body(fault, model)
    assert body["system"] == [{"type": "text", "text": "You add.", "cache_control": EPHEMERAL}]
    assert body["tools"][-1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in body["tools"][0]
    assert body["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert (result.usage.cache_read_tokens, result.usage.cache_write_tokens) == (300, 40)
    assert result.usage.to_dict()["cache_read_tokens"] == 300


def test_anthropic_caching_off_by_a_flag(fault: Any) -> None:
    model = AnthropicModel(
        f"cached~c{next(_tags)}", api_key="k", base_url=fault.url, retry=FAST, prompt_cache=False
    )
    Agent(model, tools=[add], system_prompt="You add.", store=None)("hi")
    assert "cache_control" not in str(_body(fault, model))


def _bedrock(fault: Any, name: str, **kwargs: Any) -> BedrockModel:
    return BedrockModel(
        name,
        region="us-east-1",
        endpoint_url=fault.url,
        aws_access_key_id="AKIDTEST",
        aws_secret_access_key="secret",
        retry=FAST,
        **kwargs,
    )


def test_bedrock_claude_gets_cache_points_where_supported(fault: Any) -> None:
    model = _bedrock(fault, f"cached~{next(_tags)}.anthropic.claude-sonnet-4-20250514-v1:0")
    assert model.prompt_cache is True
    result = Agent(model, tools=[add], system_prompt="You add.", store=None)("hi")
    body = _body(fault, model)
    assert body["system"][-1] == POINT
    assert body["toolConfig"]["tools"][-1] == POINT
    assert body["messages"][-1]["content"][-1] == POINT
    assert (result.usage.cache_read_tokens, result.usage.cache_write_tokens) == (300, 40)
    other = _bedrock(fault, f"cached~{next(_tags)}.meta.llama3-1-70b-instruct-v1:0")
    assert other.prompt_cache is False
    Agent(other, system_prompt="You add.", store=None)("hi")
    assert "cachePoint" not in str(_body(fault, other))


def test_openai_cached_prompt_tokens_are_reported(fault: Any) -> None:
    model = OpenAIModel(
        f"cached~c{next(_tags)}", base_url=fault.url + "/v1", api_key="sk", retry=FAST
    )
    result = Agent(model, store=None)("hi")
    assert result.usage.cache_read_tokens == 8
    assert result.usage.input_tokens == 11
