"""GeminiModel against llm-katan's Gemini routes (``--providers vertexai``, echo backend,
keys validated), a third-party server: generateContent and streamGenerateContent for
text, tools and streaming, behind the header shim of tests/servers/gemini_routes.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.gemini_routes import VERTEX_KEY, katan_gemini_app
from servers.runner import ThreadServer
from tether import Agent, Limits, tool
from tether.events import TextDelta
from tether.messages import Message
from tether.models import GeminiModel, ProviderError, RetryPolicy, model_from_string
from tether.models.assembler import ResponseAssembler
from tether.models.base import ModelRequest

ONCE = RetryPolicy(max_attempts=1, stale_timeout=20)


@pytest.fixture(scope="module")
def katan_gemini() -> Iterator[ThreadServer]:
    server = ThreadServer(katan_gemini_app()).start()
    yield server
    server.stop()


@tool
def clock() -> str:
    """Tell the time."""
    return "12:00"


def gemini(url: str, **kwargs) -> GeminiModel:
    kwargs.setdefault("api_key", VERTEX_KEY)
    kwargs.setdefault("retry", ONCE)
    return GeminiModel("echo-model", base_url=url, **kwargs)


async def assemble(model, request):
    assembler = ResponseAssembler()
    events = [e async for e in model.stream(request)]
    for event in events:
        assembler.add(event)
    return assembler.finish(), events


@pytest.mark.parametrize("streaming", [True, False])
async def test_text(katan_gemini, streaming):
    request = ModelRequest([Message.user("hello there")], [], "be brief")
    response, events = await assemble(gemini(katan_gemini.url, streaming=streaming), request)
    assert response.stop_reason == "end_turn"
    assert "hello there" in response.message.text
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    deltas = [e for e in events if type(e) is TextDelta]
    assert len(deltas) > 1 if streaming else len(deltas) == 1


@pytest.mark.parametrize("streaming", [True, False])
async def test_tool_call(katan_gemini, streaming):
    """llm-katan calls the first declared function (a whole JSON body even when streamed)."""
    request = ModelRequest([Message.user("what time is it")], [clock.spec()])
    response, _ = await assemble(gemini(katan_gemini.url, streaming=streaming), request)
    assert response.stop_reason == "tool_use"
    [call] = response.tool_calls
    assert call.name == "clock"
    assert call.id.startswith("gemini_call_")


async def test_an_agent_runs_the_tool_and_sends_the_result_back(katan_gemini):
    """llm-katan calls a tool whenever tools are offered, so the run ends at its turn limit
    after the tool ran and its result went back."""
    agent = Agent(model=gemini(katan_gemini.url), tools=[clock], limits=Limits(turns=2))
    result = await agent.invoke_async("what time is it")
    assert result.stop_reason == "limit_turns"
    assert result.usage.tool_calls == 2


async def test_a_wrong_key_is_an_auth_error(katan_gemini):
    with pytest.raises(ProviderError) as caught:
        await assemble(
            gemini(katan_gemini.url, api_key="wrong"), ModelRequest([Message.user("hi")], [])
        )
    assert caught.value.reason == "auth"
    assert caught.value.status == 401
    assert "GEMINI_API_KEY" in str(caught.value)


async def test_the_model_string(katan_gemini, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", VERTEX_KEY)
    model = model_from_string("gemini:echo-model")
    assert isinstance(model, GeminiModel)
    assert model.name == "gemini:echo-model"
    assert model.api_key == VERTEX_KEY
