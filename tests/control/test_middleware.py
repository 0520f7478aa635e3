"""Model and tool middleware: input / wrap / output phases, ordering, copies, short-circuits."""

import copy
import json
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import hook_agents
import pytest
from hook_agents import TOOL_TURN
from recording_script import Script

from tether import (
    Agent,
    ConfigurationError,
    Message,
    MiddlewareError,
    RunError,
    ToolResult,
)
from tether.control import BeforeModelCall, ModelMiddleware, ToolMiddleware, ToolRequest
from tether.control.middleware import ModelCallNext, ModelItem, ToolCallNext, ToolItem
from tether.events import (
    FinalResult,
    ModelCallFinished,
    ModelCallStarted,
    StreamEvent,
    TextDelta,
    ToolFinished,
)
from tether.messages import TextBlock, Usage
from tether.models import ModelRequest, ModelResponse


@dataclass
class Notice:
    """An extra event of the middleware's own (any object may travel through the stream)."""

    kind: str
    text: str


def make_agent(*turns: Any, runs: list[Any] | None = None, **kwargs: Any) -> tuple[Agent, Script]:
    """The shared hook agent with only the tool add, streaming in 4-character chunks."""
    return hook_agents.make_agent(*turns, runs=runs, tools=("add",), chunk_size=4, **kwargs)


async def collect(agent: Agent, prompt: str) -> list[StreamEvent | Notice]:
    return [event async for event in agent.stream(prompt)]


# -- zero middleware ---------------------------------------------------------------------


def run_onions(agent: Agent) -> tuple[Any, Any]:
    """The middleware chains the agent's next run builds (they are per run: the run's
    state holds them), seen from a hook at its first model call."""
    seen: list[tuple[Any, Any]] = []

    @agent.on(BeforeModelCall)
    def capture(event: BeforeModelCall) -> None:
        run = event.agent.conversation.run
        seen.append((run.model_onion, run.tool_onion))

    assert agent("hi").text == "done"
    return seen[0]


def test_zero_middleware_adds_no_onion() -> None:
    agent, _ = make_agent("done")
    assert agent.runtime.model_middleware == ()
    assert agent.runtime.tool_middleware == ()
    assert run_onions(agent) == (None, None)


def test_only_model_middleware_adds_no_tool_onion_and_vice_versa() -> None:
    model_only, _ = make_agent("done", middleware=[ModelMiddleware()])
    model_onion, tool_onion = run_onions(model_only)
    assert model_onion is not None
    assert tool_onion is None
    tool_only, _ = make_agent("done", middleware=[ToolMiddleware()])
    model_onion, tool_onion = run_onions(tool_only)
    assert tool_onion is not None
    assert model_onion is None


@pytest.mark.parametrize("bad", [object(), "cache", ModelMiddleware])
def test_a_non_middleware_is_a_configuration_error(bad: Any) -> None:
    with pytest.raises(ConfigurationError) as info:
        make_agent("done", middleware=[bad])
    assert "middleware=[...] takes ModelMiddleware or ToolMiddleware instances" in str(info.value)
    assert repr(bad) in str(info.value)


# -- model middleware: phases ----------------------------------------------------------------


class AddContext(ModelMiddleware):
    async def input(self, request: ModelRequest) -> ModelRequest:
        request.messages.insert(0, Message.user("context: the user likes tea"))
        return request


def test_model_input_rewrites_the_request() -> None:
    agent, script = make_agent("done", middleware=[AddContext()])
    agent("hi")
    assert [m.text for m in script.seen[0]] == ["context: the user likes tea", "hi"]
    assert [m.text for m in agent.messages] == ["hi", "done"]


def test_model_input_sees_the_before_model_call_rewrite() -> None:
    agent, script = make_agent("done", middleware=[AddContext()])
    agent.hooks.add(BeforeModelCall, lambda e: setattr(e, "messages", [Message.user("rewritten")]))
    agent("hi")
    assert [m.text for m in script.seen[0]] == ["context: the user likes tea", "rewritten"]


class Shout(ModelMiddleware):
    async def output(self, response: ModelResponse) -> ModelResponse:
        message = Message("assistant", [TextBlock(response.message.text.upper())], response.usage)
        return ModelResponse(message, response.stop_reason, response.usage)


def test_model_output_rewrites_the_response() -> None:
    agent, _ = make_agent("quiet please", middleware=[Shout()])
    result = agent("hi")
    assert result.text == "QUIET PLEASE"
    assert agent.messages[-1].text == "QUIET PLEASE"


class Announce(ModelMiddleware):
    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        yield Notice("middleware", "before the model")  # type: ignore[misc]
        async for item in call_next(request):
            yield item
        yield Notice("middleware", "after the model")  # type: ignore[misc]


class AnnounceAndFinish(ModelMiddleware):
    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        yield Notice("middleware", "before the model")  # type: ignore[misc]
        response: ModelItem | None = None
        async for item in call_next(request):
            if isinstance(item, ModelResponse):
                response = item
            else:
                yield item
        yield Notice("middleware", "after the model")  # type: ignore[misc]
        assert response is not None
        yield response


async def test_model_wrap_events_reach_stream_consumers() -> None:
    agent, _ = make_agent("hello world", middleware=[AnnounceAndFinish()])
    events = await collect(agent, "hi")
    kinds = [type(e).__name__ for e in events]
    started = kinds.index("ModelCallStarted")
    finished = kinds.index("ModelCallFinished")
    inside = events[started + 1 : finished]
    assert isinstance(inside[0], Notice)
    assert inside[0].text == "before the model"
    assert isinstance(inside[-1], Notice)
    assert inside[-1].text == "after the model"
    deltas = [e for e in inside if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == "hello world"
    assert len(deltas) > 1  # the model's own deltas are streamed through the wrap
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.text == "hello world"


def test_model_wrap_that_yields_after_the_response_is_a_middleware_error() -> None:
    """The last item a wrap yields is the result, so an event after the response is a bug."""
    agent, script = make_agent("hello", middleware=[Announce()])
    with pytest.raises(MiddlewareError, match=r"\(last item: Notice\)"):
        agent("hi")
    assert script.calls == 1
    assert [m.role for m in agent.messages] == ["user"]


class OnlyNotice(ModelMiddleware):
    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        yield Notice("middleware", "no model today")  # type: ignore[misc]


async def test_model_wrap_that_yields_no_response_is_a_middleware_error() -> None:
    agent, script = make_agent("hello", middleware=[OnlyNotice()])
    with pytest.raises(MiddlewareError) as info:
        await agent.invoke_async("hi")
    message = str(info.value)
    assert message.startswith("the model middleware chain did not end with a ModelResponse")
    assert message.endswith("a middleware's wrap() must yield the result last")
    assert script.calls == 0
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user"]


class Swallow(ModelMiddleware):
    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        async for item in call_next(request):
            if not isinstance(item, ModelResponse):
                yield item


def test_model_wrap_that_drops_the_response_is_a_middleware_error() -> None:
    agent, _ = make_agent("hello", middleware=[Swallow()])
    with pytest.raises(MiddlewareError, match=r"did not end with a ModelResponse \(last item: "):
        agent("hi")
    assert [m.role for m in agent.messages] == ["user"]


class Cache(ModelMiddleware):
    def __init__(self) -> None:
        self.store: dict[str, ModelResponse] = {}
        self.hits = 0

    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        key = json.dumps([m.to_dict() for m in request.messages], sort_keys=True)
        if key in self.store:
            self.hits += 1
            yield copy.deepcopy(self.store[key])
            return
        last: ModelItem | None = None
        async for item in call_next(request):
            last = item
            yield item
        assert isinstance(last, ModelResponse)
        self.store[key] = copy.deepcopy(last)


def test_model_wrap_short_circuit_skips_the_model() -> None:
    cache = Cache()
    agent, script = make_agent("first answer", "second answer", middleware=[cache])
    assert agent("hi").text == "first answer"
    agent.reset()
    result = agent("hi")
    assert result.text == "first answer"
    assert script.calls == 1
    assert cache.hits == 1
    agent.reset()
    assert agent("something else").text == "second answer"
    assert script.calls == 2


async def test_model_wrap_short_circuit_streams_no_deltas() -> None:
    cache = Cache()
    agent, script = make_agent("cached text", middleware=[cache])
    await agent.invoke_async("hi")
    agent.reset()
    events = await collect(agent, "hi")
    assert script.calls == 1
    assert not any(isinstance(e, TextDelta) for e in events)
    assert [type(e) for e in events if isinstance(e, ModelCallStarted | ModelCallFinished)] == [
        ModelCallStarted,
        ModelCallFinished,
    ]
    assert isinstance(events[-1], FinalResult)
    assert events[-1].result.text == "cached text"


class Vandal(ModelMiddleware):
    def __init__(self) -> None:
        self.seen_ids: list[int] = []

    async def input(self, request: ModelRequest) -> ModelRequest:
        for message in request.messages:
            for block in message.content:
                if isinstance(block, TextBlock):
                    block.text = "vandalised"
        request.messages.append(Message.user("extra"))
        request.tool_specs[0]["name"] = "renamed"
        request.tool_specs.clear()
        return request

    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        self.seen_ids.extend(id(m) for m in request.messages)
        async for item in call_next(request):
            yield item


def test_model_middleware_sees_deep_copies() -> None:
    vandal = Vandal()
    agent, script = make_agent("done", middleware=[vandal])
    original_specs = copy.deepcopy(agent.tool_specs)
    agent("hi")
    # the model got the vandalised copy ...
    assert [m.text for m in script.seen[0]] == ["vandalised", "extra"]
    assert script.specs[0] == []
    # ... the history and the agent's tool specs are untouched
    assert [m.text for m in agent.messages] == ["hi", "done"]
    assert agent.tool_specs == original_specs
    assert agent.tool_specs[0]["name"] == "add"
    assert not set(vandal.seen_ids) & {id(m) for m in agent.messages}


def test_model_middleware_deep_copies_on_every_call() -> None:
    vandal = Vandal()
    agent, script = make_agent(TOOL_TURN, "done", middleware=[vandal])
    agent("hi")
    assert script.calls == 2
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "assistant"]
    assert agent.messages[0].text == "hi"
    assert agent.messages[1].tool_calls[0].arguments == {"a": 1, "b": 2}


class Tracer(ModelMiddleware):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def input(self, request: ModelRequest) -> ModelRequest:
        self.log.append(f"in:{self.name}")
        last = request.messages[-1]
        if last.role == "user":
            request.messages[-1] = Message.user(f"{last.text}>{self.name}")
        return request

    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        self.log.append(f"wrap:{self.name}")
        async for item in call_next(request):
            yield item
        self.log.append(f"/wrap:{self.name}")

    async def output(self, response: ModelResponse) -> ModelResponse:
        self.log.append(f"out:{self.name}")
        content = [
            TextBlock(f"{b.text}<{self.name}") if isinstance(b, TextBlock) else b
            for b in response.message.content
        ]
        message = Message("assistant", content, response.usage)
        return ModelResponse(message, response.stop_reason, response.usage)


def test_model_middleware_order() -> None:
    log: list[str] = []
    agent, script = make_agent(
        "reply", middleware=[Tracer("A", log), Tracer("B", log), Tracer("C", log)]
    )
    result = agent("hi")
    assert log == [
        "in:A",
        "in:B",
        "in:C",
        "wrap:A",
        "wrap:B",
        "wrap:C",
        "/wrap:C",
        "/wrap:B",
        "/wrap:A",
        "out:C",
        "out:B",
        "out:A",
    ]
    assert script.seen[0][-1].text == "hi>A>B>C"
    assert result.text == "reply<C<B<A"


class InputOnly(ModelMiddleware):
    async def input(self, request: ModelRequest) -> ModelRequest:
        return request


class OutputOnly(ModelMiddleware):
    async def output(self, response: ModelResponse) -> ModelResponse:
        return response


class WrapOnly(ModelMiddleware):
    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        async for item in call_next(request):
            yield item


def test_phases_not_overridden_add_no_layer() -> None:
    agent, _ = make_agent("done", middleware=[InputOnly(), OutputOnly()])
    onion, _ = run_onions(agent)
    assert onion is not None
    # no wrap layer: the chain is the innermost call itself
    assert onion.call.__name__ == "<lambda>"
    assert len(onion.inputs) == 1
    assert len(onion.outputs) == 1

    wrapped, _ = make_agent("done", middleware=[InputOnly(), WrapOnly(), WrapOnly()])
    onion, _ = run_onions(wrapped)
    assert onion is not None
    assert onion.call.__name__ == "layer"
    assert onion.outputs == []


def test_model_middleware_with_tool_calls_end_to_end() -> None:
    log: list[str] = []
    runs: list[Any] = []
    agent, _script = make_agent(TOOL_TURN, "3", runs=runs, middleware=[Tracer("A", log)])
    result = agent("hi")
    assert runs == [("add", 1, 2)]
    assert result.text == "3<A"
    assert log.count("in:A") == 2
    assert log.count("out:A") == 2


# -- tool middleware -----------------------------------------------------------------------


class Double(ToolMiddleware):
    async def input(self, request: ToolRequest) -> ToolRequest:
        request.call.arguments = {k: v * 2 for k, v in request.call.arguments.items()}
        return request


def test_tool_input_rewrites_arguments() -> None:
    runs: list[Any] = []
    agent, script = make_agent(TOOL_TURN, "done", runs=runs, middleware=[Double()])
    agent("hi")
    assert runs == [("add", 2, 4)]
    assert agent.messages[2].tool_results[0].content == "6"
    assert script.seen[1][-1].tool_results[0].content == "6"


class InPlace(ToolMiddleware):
    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def input(self, request: ToolRequest) -> ToolRequest:
        self.seen.append(request.call)
        request.call.arguments["a"] = 100
        return request


def test_tool_middleware_sees_a_deep_copy_of_the_call() -> None:
    runs: list[Any] = []
    mw = InPlace()
    agent, _ = make_agent(TOOL_TURN, "done", runs=runs, middleware=[mw])
    agent("hi")
    assert runs == [("add", 100, 2)]
    history_call = agent.messages[1].tool_calls[0]
    assert history_call.arguments == {"a": 1, "b": 2}
    assert mw.seen[0] is not history_call
    result = agent.messages[2].tool_results[0]
    assert result.tool_call_id == history_call.id
    assert result.content == "102"


class Annotate(ToolMiddleware):
    async def output(self, result: ToolResult) -> ToolResult:
        return ToolResult(result.tool_call_id, result.name, f"{result.content} (verified)")


def test_tool_output_rewrites_the_result() -> None:
    agent, script = make_agent(TOOL_TURN, "done", middleware=[Annotate()])
    agent("hi")
    assert agent.messages[2].tool_results[0].content == "3 (verified)"
    assert script.seen[1][-1].tool_results[0].content == "3 (verified)"


class Stub(ToolMiddleware):
    def __init__(self) -> None:
        self.requests: list[ToolRequest] = []

    async def wrap(
        self, request: ToolRequest, call_next: ToolCallNext
    ) -> AsyncGenerator[ToolItem, None]:
        self.requests.append(request)
        yield ToolResult(request.call.id, request.call.name, "stubbed")


async def test_tool_wrap_short_circuit_does_not_run_the_tool() -> None:
    runs: list[Any] = []
    stub = Stub()
    agent, script = make_agent(TOOL_TURN, "done", runs=runs, middleware=[stub])
    events = await collect(agent, "hi")
    assert runs == []
    assert stub.requests[0].tool is agent.tool_map["add"]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.result.content for e in finished] == ["stubbed"]
    assert script.seen[1][-1].tool_results[0].content == "stubbed"
    final = events[-1]
    assert isinstance(final, FinalResult)
    assert final.result.usage.tool_calls == 0


class ToolTracer(ToolMiddleware):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name = name
        self.log = log

    async def input(self, request: ToolRequest) -> ToolRequest:
        self.log.append(f"in:{self.name}")
        return request

    async def wrap(
        self, request: ToolRequest, call_next: ToolCallNext
    ) -> AsyncGenerator[ToolItem, None]:
        self.log.append(f"wrap:{self.name}")
        async for item in call_next(request):
            yield item
        self.log.append(f"/wrap:{self.name}")

    async def output(self, result: ToolResult) -> ToolResult:
        self.log.append(f"out:{self.name}")
        return ToolResult(result.tool_call_id, result.name, f"{result.content}<{self.name}")


def test_tool_middleware_order() -> None:
    log: list[str] = []
    agent, _ = make_agent(
        TOOL_TURN, "done", middleware=[ToolTracer("A", log), ToolTracer("B", log)]
    )
    agent("hi")
    assert log == ["in:A", "in:B", "wrap:A", "wrap:B", "/wrap:B", "/wrap:A", "out:B", "out:A"]
    assert agent.messages[2].tool_results[0].content == "3<B<A"


class Empty(ToolMiddleware):
    async def wrap(
        self, request: ToolRequest, call_next: ToolCallNext
    ) -> AsyncGenerator[ToolItem, None]:
        async for _ in call_next(request):
            pass
        yield "not a result"


def test_tool_wrap_that_does_not_end_with_a_result_fails_the_run() -> None:
    agent, _ = make_agent(TOOL_TURN, "done", middleware=[Empty()])
    with pytest.raises(RunError) as info:
        agent("hi")
    assert (
        "the tool middleware chain for 'add' did not end with a ToolResult (last item: str)"
        in str(info.value)
    )
    assert info.value.result is not None
    assert info.value.result.stop_reason == "error"
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert agent.messages[2].tool_results[0].is_error


def test_tool_middleware_is_not_used_for_unknown_tools() -> None:
    stub = Stub()
    agent, _script = make_agent(
        {"tool_calls": [{"name": "zzz_unknown", "args": {}}]}, "done", middleware=[stub]
    )
    agent("hi")
    assert stub.requests == []
    assert agent.messages[2].tool_results[0].is_error


def test_model_and_tool_middleware_together() -> None:
    log: list[str] = []
    agent, _ = make_agent(TOOL_TURN, "done", middleware=[Tracer("M", log), ToolTracer("T", log)])
    result = agent("hi")
    assert result.text == "done<M"
    assert agent.messages[2].tool_results[0].content == "3<T"
    assert "wrap:T" in log
    assert "wrap:M" in log


def test_usage_is_kept_through_model_middleware() -> None:
    agent, _ = make_agent("done", middleware=[WrapOnly()])
    result = agent("hi")
    assert result.usage.model_calls == 1
    assert result.usage.output_tokens >= 1
    assert isinstance(agent.messages[-1].usage, Usage)


# -- phases that forget to return -------------------------------------------------------------


class ForgetfulInput(ModelMiddleware):
    async def input(self, request: ModelRequest) -> ModelRequest:
        request.messages.append(Message.user("lost"))
        return None  # type: ignore[return-value]


class ForgetfulOutput(ModelMiddleware):
    async def output(self, response: ModelResponse) -> ModelResponse:
        return response.message  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("middleware", "text"),
    [
        (
            ForgetfulInput(),
            "middleware ForgetfulInput.input() returned NoneType, expected ModelRequest",
        ),
        (
            ForgetfulOutput(),
            "middleware ForgetfulOutput.output() returned Message, expected ModelResponse",
        ),
    ],
    ids=["input", "output"],
)
def test_a_model_phase_returning_the_wrong_type_is_a_middleware_error(
    middleware: ModelMiddleware, text: str
) -> None:
    agent, _ = make_agent("done", middleware=[middleware])
    with pytest.raises(MiddlewareError) as info:
        agent("hi")
    assert str(info.value).startswith(text)
    assert "must return the (possibly rewritten) value it was given" in str(info.value)
    assert [m.role for m in agent.messages] == ["user"]


class ForgetfulToolInput(ToolMiddleware):
    async def input(self, request: ToolRequest) -> ToolRequest:
        return request.call  # type: ignore[return-value]


class ForgetfulToolOutput(ToolMiddleware):
    async def output(self, result: ToolResult) -> ToolResult:
        return result.content  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("middleware", "text"),
    [
        (
            ForgetfulToolInput(),
            "middleware ForgetfulToolInput.input() returned ToolCall, expected ToolRequest",
        ),
        (
            ForgetfulToolOutput(),
            "middleware ForgetfulToolOutput.output() returned str, expected ToolResult",
        ),
    ],
    ids=["input", "output"],
)
def test_a_tool_phase_returning_the_wrong_type_fails_the_run_clearly(
    middleware: ToolMiddleware, text: str
) -> None:
    agent, _ = make_agent(TOOL_TURN, "done", middleware=[middleware])
    with pytest.raises(RunError) as info:
        agent("hi")
    assert text in str(info.value)
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]
    assert agent.messages[2].tool_results[0].is_error
