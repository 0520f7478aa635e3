"""FallbackChain with in-process models: which model each call of an invocation uses."""

import asyncio
from collections.abc import AsyncGenerator

import pytest

from tether import Agent, tool
from tether.events import ModelFallback, ModelStreamEvent
from tether.models import FallbackChain, ModelRequest, ScriptedModel
from tether.models.failover import FailoverReason, ProviderError


class Down:
    """A primary that is overloaded until told otherwise."""

    name = "primary"

    def __init__(self) -> None:
        self.calls = 0
        self.up = False
        self.backup = ScriptedModel(["primary answers"], name="primary-inner")

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        self.calls += 1
        if not self.up:
            raise ProviderError(FailoverReason.OVERLOADED, self.name, "529 overloaded", status=529)
        async for event in self.backup.stream(request):
            yield event


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def test_after_a_fallback_the_invocation_stays_on_the_fallback_and_the_next_starts_over():
    primary = Down()
    fallback = ScriptedModel(
        [{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, "three", "from the fallback"],
        name="fallback",
    )
    agent = Agent(model=FallbackChain([primary, fallback]), tools=[add])
    result = agent("add")
    assert result.text == "three"
    assert primary.calls == 1  # the second model call of the run did not try the primary again
    assert result.usage.model_fallbacks == 1
    primary.up = True
    assert agent("again").text == "primary answers"  # a new invocation starts from the primary
    assert primary.calls == 2
    assert fallback.calls == 2


def test_middleware_copies_keep_the_invocation():
    from tether.control import ModelMiddleware

    class Passthrough(ModelMiddleware):
        async def input(self, request: ModelRequest) -> ModelRequest:
            seen.append(request.invocation)
            return request

    seen: list[int | None] = []
    agent = Agent(model=ScriptedModel(["a", "b"]), middleware=[Passthrough()])
    agent("one")
    agent("two")
    assert seen[0] is not None
    assert seen[1] is not None
    assert seen[0] != seen[1]


class Garbled:
    """A custom model whose stream fails with a plain exception before any output."""

    name = "garbled"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        raise ValueError("cannot decode frame 3")
        yield  # an async generator


def test_a_plain_exception_before_output_is_an_unknown_provider_error_and_falls_back():
    agent = Agent(model=FallbackChain([Garbled(), ScriptedModel(["from the fallback"])]))

    async def run() -> list[object]:
        return [e async for e in agent.stream("hi")]

    events = asyncio.run(run())
    [fallback] = [e for e in events if isinstance(e, ModelFallback)]
    assert (fallback.from_model, fallback.to_model, fallback.reason) == (
        "garbled",
        "scripted",
        "unknown",
    )
    assert "ValueError: cannot decode frame 3" in fallback.error
    assert agent.last_result.text == "from the fallback"
    alone = Agent(model=FallbackChain([Garbled()]))
    with pytest.raises(ProviderError, match=r"unknown, no HTTP status\) after 1 attempt") as info:
        alone("hi")
    assert (info.value.provider, info.value.attempts) == ("garbled", 1)


class Silent:
    """A custom model whose stream ends without a stop event and without output."""

    name = "silent"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        return
        yield  # an async generator


def test_a_stream_that_ends_without_a_stop_event_before_output_falls_back():
    agent = Agent(model=FallbackChain([Silent(), ScriptedModel(["from the fallback"])]))

    async def run() -> list[object]:
        return [e async for e in agent.stream("hi")]

    [fallback] = [e for e in asyncio.run(run()) if isinstance(e, ModelFallback)]
    assert (fallback.from_model, fallback.reason) == ("silent", "format_error")
    assert "ended without a stop event" in fallback.error
    assert agent.last_result.text == "from the fallback"
    alone = Agent(model=FallbackChain([Silent()]))
    with pytest.raises(ProviderError, match=r"format_error, no HTTP status\) after 1 attempt"):
        alone("hi")
