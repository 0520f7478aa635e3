"""ModelCall: one model call's events, and its response handed back as a typed value."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from tether import Agent, Execution, MiddlewareError, ModelError, RetryLimitError
from tether.control import AfterModelCall, ModelMiddleware
from tether.control.middleware import ModelCallNext, ModelItem
from tether.events import ModelCallStarted, TextDelta
from tether.modelcall import ModelCall
from tether.models import ModelRequest, ModelResponse, ScriptedModel
from tether.run_state import RunState
from tether.tools.context import CancelSignal


async def run_call(agent: Agent) -> tuple[ModelCall, list[Any]]:
    run = RunState(agent, CancelSignal())
    call = ModelCall(run)
    events = [event async for event in call.events()]
    return call, events


async def test_events_then_the_response() -> None:
    agent = Agent(model=ScriptedModel(["hello world"], chunk_size=5))
    call, events = await run_call(agent)
    assert type(events[0]) is ModelCallStarted
    assert "".join(e.text for e in events if type(e) is TextDelta) == "hello world"
    assert isinstance(call.response, ModelResponse)
    assert call.response.message.text == "hello world"
    assert not any(isinstance(e, ModelResponse) for e in events)  # never a "last item"


async def test_no_response_is_left_when_the_model_fails() -> None:
    class Broken(ScriptedModel):
        async def stream(self, request: ModelRequest) -> AsyncGenerator[Any, None]:
            raise ConnectionError("socket closed")
            yield  # pragma: no cover

    call = ModelCall(RunState(Agent(model=Broken(["x"])), CancelSignal()))
    with pytest.raises(ModelError, match="model 'scripted' failed: ConnectionError: socket closed"):
        async for _ in call.events():
            pass
    assert call.response is None


async def test_hook_retries_are_bounded_by_execution() -> None:
    agent = Agent(model=ScriptedModel(["a", "b", "c"]), execution=Execution(max_retries=1))
    agent.hooks.add(AfterModelCall, lambda e: setattr(e, "retry", True))
    with pytest.raises(RetryLimitError, match=r"the limit is 1 \(Execution\(max_retries=...\)\)"):
        await run_call(agent)


async def test_middleware_response_is_handed_back_after_its_output_phase() -> None:
    class Upper(ModelMiddleware):
        async def output(self, response: ModelResponse) -> ModelResponse:
            from dataclasses import replace

            from tether.messages import Message

            return replace(response, message=Message.assistant(response.message.text.upper()))

    call, events = await run_call(Agent(model=ScriptedModel(["quiet"]), middleware=[Upper()]))
    assert call.response is not None
    assert call.response.message.text == "QUIET"
    assert "".join(e.text for e in events if type(e) is TextDelta) == "quiet"


async def test_a_middleware_yielding_after_the_result_is_a_middleware_error() -> None:
    class Late(ModelMiddleware):
        async def wrap(
            self, request: ModelRequest, call_next: ModelCallNext
        ) -> AsyncGenerator[ModelItem, None]:
            async for item in call_next(request):
                yield item
            yield TextDelta("late")

    call = ModelCall(
        RunState(Agent(model=ScriptedModel(["x"]), middleware=[Late()]), CancelSignal())
    )
    with pytest.raises(MiddlewareError, match=r"\(last item: TextDelta\)"):
        async for _ in call.events():
            pass
    assert call.response is None


def test_model_call_is_used_by_the_loop() -> None:
    result = asyncio.run(Agent(model=ScriptedModel(["fine"])).invoke_async("hi"))
    assert result.text == "fine"
