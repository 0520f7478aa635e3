"""``openai-compatible:MODEL@URL`` against local OpenAI-shaped servers and their quirks.

llm-katan's OpenAI routes (a third-party server: a whole JSON body answers a
streamed tool request) and the fault server for what llm-katan cannot produce:
no usage in the stream, a server that refuses ``stream_options`` (422) and one
that refuses ``tool_choice`` (vLLM without ``--enable-auto-tool-choice``).
"""

from __future__ import annotations

import itertools

import pytest

from tether import Agent, ConfigurationError, Limits, tool
from tether.events import TextDelta
from tether.messages import Message
from tether.models import OpenAIModel, ProviderError, model_from_string
from tether.models.base import ModelRequest

_tags = itertools.count()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def compatible(server, plan: str) -> OpenAIModel:
    built = model_from_string(f"openai-compatible:{plan}~compat{next(_tags)}@{server.url}/v1")
    assert isinstance(built, OpenAIModel)
    return built


def bodies(fault, m: OpenAIModel) -> list[dict]:
    return [r["body"] for r in fault.app.state.recorder.for_model(m.model)]


async def stream(m, tools: bool = False):
    req = ModelRequest([Message.user("hi")], [add.spec()] if tools else [])
    return [e async for e in m.stream(req)]


def test_the_model_string(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    m = model_from_string("openai-compatible:qwen3@http://127.0.0.1:8080/v1")
    assert isinstance(m, OpenAIModel)
    assert (m.name, m.api_key) == ("openai-compatible:qwen3", "none")
    with pytest.raises(ConfigurationError, match=r"'openai-compatible:MODEL@http://host:port/v1'"):
        model_from_string("openai-compatible:qwen3")


async def test_katan_text_through_the_model_string(katan, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "llm-katan-openai-key")
    m = model_from_string(f"openai-compatible:echo-model@{katan.url}/v1")
    result = await Agent(model=m).invoke_async("ping")
    assert "ping" in result.text
    assert result.stop_reason == "end_turn"


async def test_katan_answers_a_streamed_tool_request_with_whole_json(katan, monkeypatch):
    """llm-katan returns one application/json completion to ``stream=true`` with tools;
    the agent reads it as a whole completion and runs the tool."""
    monkeypatch.setenv("OPENAI_API_KEY", "llm-katan-openai-key")
    m = model_from_string(f"openai-compatible:echo-model@{katan.url}/v1")
    agent = Agent(model=m, tools=[add], limits=Limits(turns=1))  # katan always calls a tool
    result = await agent.invoke_async("add one and one")
    assert result.stop_reason == "limit_turns"
    assert agent.messages[2].tool_results[0].content == "2"  # katan's dummy args: a=1, b=1


async def test_fault_whole_json_to_a_stream_request(fault):
    m = compatible(fault, "json_tools")
    events = await stream(m, tools=True)
    assert events[-1].stop_reason == "tool_use"
    assert bodies(fault, m)[0]["stream"] is True


async def test_no_usage_in_the_stream_is_zero_usage_and_the_text_intact(fault):
    m = compatible(fault, "nousage")
    result = await Agent(model=m).invoke_async("hi")
    assert result.text == "Hello world"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (0, 0)


async def test_a_server_that_refuses_stream_options_is_asked_again_without_it(fault):
    m = compatible(fault, "no_stream_options")
    events = await stream(m)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello world"
    sent = bodies(fault, m)
    assert ["stream_options" in b for b in sent] == [True, False]
    await stream(m)  # remembered: one request, without the field
    assert ["stream_options" in b for b in bodies(fault, m)] == [True, False, False]
    assert m.refused_fields == {"stream_options"}


async def test_a_server_that_refuses_tool_choice_is_asked_again_without_it(fault):
    m = compatible(fault, "no_tool_choice")
    m.params["tool_choice"] = "auto"
    events = await stream(m, tools=True)
    assert events[-1].stop_reason == "tool_use"
    assert ["tool_choice" in b for b in bodies(fault, m)] == [True, False]
    assert m.refused_fields == {"tool_choice"}


async def test_a_per_call_tool_choice_to_a_server_that_refuses_it(fault):
    """A hook's ``tool_choice`` for one call: dropped (with a warning) when the server
    refuses the field, so the call still runs; later calls do not send it."""
    m = compatible(fault, "no_tool_choice")
    req = ModelRequest([Message.user("hi")], [add.spec()], tool_choice="required")
    events = [e async for e in m.stream(req)]
    assert events[-1].stop_reason == "tool_use"
    assert [b.get("tool_choice") for b in bodies(fault, m)] == ["required", None]
    [e async for e in m.stream(req)]
    assert len(bodies(fault, m)) == 3
    assert "tool_choice" not in bodies(fault, m)[-1]


async def test_a_400_that_names_no_optional_field_is_still_an_error(fault):
    """The bad-request quirk handling drops only a field the server named."""
    m = compatible(fault, "efmt")
    with pytest.raises(ProviderError, match="preceeding") as info:
        await stream(m, tools=True)
    assert info.value.reason.value == "format_error"
    assert len(bodies(fault, m)) == 1
    assert m.refused_fields == set()
