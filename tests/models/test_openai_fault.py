"""OpenAIModel against the project's fault server (tests/servers/openai_routes.py).

Every test here uses the fault server: streamed tool-call fragments, usage in a
separate chunk, think tags, errors with OpenAI's documented bodies, stalls and
broken streams, bad input.
"""

from __future__ import annotations

import gc
import inspect
import itertools

import pytest

from tether import Agent, ModelError, tool
from tether.events import ModelRetry, ReasoningDelta, TextDelta
from tether.messages import Message, ReasoningBlock, ToolResult
from tether.models import FallbackChain, OpenAIModel, ProviderError, RetryPolicy
from tether.models.assembler import ResponseAssembler
from tether.models.base import ModelRequest

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def model(fault, plan: str, **kwargs) -> OpenAIModel:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("api_key", "sk-test")
    return OpenAIModel(f"{plan}~{next(_tags)}", base_url=fault.url + "/v1", **kwargs)


def request(tools: bool = False) -> ModelRequest:
    specs = [add.spec()] if tools else []
    return ModelRequest([Message.user("hi")], specs, "be brief")


async def collect(m, req=None):
    return [e async for e in m.stream(req or request())]


async def assemble(m, req=None):
    assembler = ResponseAssembler()
    for event in await collect(m, req):
        assembler.add(event)
    return assembler.finish()


async def test_text_stream_with_usage_in_a_separate_final_chunk(fault):
    """Fault server: text in chunks, then finish_reason, then a choices-less usage chunk."""
    response = await assemble(model(fault, "text"))
    assert response.message.text == "Hello world"
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)


async def test_interleaved_parallel_tool_call_fragments(fault):
    """Fault server: two tool calls whose name/arguments arrive interleaved over chunks."""
    response = await assemble(model(fault, "tools"), request(tools=True))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_a", "add", {"a": 1, "b": 2}),
        ("call_b", "add", {"a": 10, "b": 2}),
    ]
    assert response.stop_reason == "tool_use"


async def test_think_tags_split_across_chunks_never_reach_text(fault):
    """Fault server: '<thi' 'nk>...' '</th' 'ink>' split over chunks; a lone '<' passes."""
    events = await collect(model(fault, "think"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert (text, reasoning) == ("Answer a < b", "secret plan")


async def test_reasoning_content_field_is_reasoning(fault):
    """Fault server: a compatible server's delta.reasoning_content becomes a reasoning block."""
    response = await assemble(model(fault, "reasoning_field"))
    assert response.message.text == "Visible"
    assert [b.text for b in response.message.content if isinstance(b, ReasoningBlock)] == [
        "hidden thought"
    ]


@pytest.mark.parametrize(
    ("plan", "stop"),
    [("length", "max_tokens"), ("filtered", "content_filter"), ("weird_stop", "end_turn")],
)
async def test_stop_reason_mapping_including_unknown(fault, plan, stop):
    """Fault server: finish_reason length / content_filter / an unknown value."""
    assert (await assemble(model(fault, plan))).stop_reason == stop


async def test_request_layout_tool_messages_and_system(fault):
    """Fault server (recorded request): system first, tool results as role 'tool' messages."""
    m = model(fault, "text")
    calls = (await assemble(model(fault, "tools"), request(True))).tool_calls
    history = [
        Message.user("hi"),
        Message("assistant", list(calls)),
        Message("tool", [ToolResult("call_a", "add", "3"), ToolResult("call_b", "add", "12")]),
    ]
    await collect(m, ModelRequest(history, [add.spec()], "sys"))
    body = fault.app.state.recorder.for_model(m.model)[-1]["body"]
    assert [x["role"] for x in body["messages"]] == ["system", "user", "assistant", "tool", "tool"]
    assert body["messages"][2]["tool_calls"][1]["function"] == {
        "name": "add",
        "arguments": '{"a": 10, "b": 2}',
    }
    assert body["messages"][4] == {"role": "tool", "tool_call_id": "call_b", "content": "12"}
    assert body["tools"][0]["function"]["name"] == "add"
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("plan", "reason", "status", "words"),
    [
        ("e402", "billing", 402, "insufficient credits"),
        ("e413", "payload_too_large", 413, "too large"),
        ("ectx", "context_overflow", 400, "maximum context length"),
        ("e404", "model_not_found", 404, "does not exist"),
        ("e429quota", "billing", 429, "exceeded your current quota"),
    ],
)
async def test_permanent_errors_abort_at_once_with_a_clear_message(
    fault, plan, reason, status, words
):
    """Fault server: documented OpenAI error bodies that must not be retried."""
    m = model(fault, plan)
    with pytest.raises(ProviderError) as info:
        await collect(m)
    err = info.value
    assert (err.reason.value, err.status, err.attempts, err.provider) == (reason, status, 1, m.name)
    assert words in str(err)
    assert f"HTTP {status}" in str(err)
    assert len(fault.app.state.recorder.for_model(m.model)) == 1


@pytest.mark.parametrize(
    ("plan", "reason"), [("e529", "overloaded"), ("e500", "server_error"), ("e402t", "rate_limit")]
)
async def test_transient_errors_are_retried_then_succeed(fault, plan, reason):
    """Fault server: 529 overloaded, 500, and a 402 that says 'try again' (a rate limit)."""
    events = await collect(model(fault, f"{plan},text"))
    retries = [e for e in events if isinstance(e, ModelRetry)]
    assert [(r.attempt, r.reason) for r in retries] == [(1, reason)]
    assert 0.001 <= retries[0].delay <= 0.0015  # base 0.001 + up to 50% jitter
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello world"


async def test_retry_after_header_is_honoured(fault):
    """Fault server: 429 with Retry-After: 0.01 replaces the computed backoff."""
    events = await collect(
        model(fault, "e429ra,text", retry=RetryPolicy(base_delay=5, stale_timeout=20))
    )
    assert [(e.reason, e.delay) for e in events if isinstance(e, ModelRetry)] == [
        ("rate_limit", 0.01)
    ]


async def test_retries_are_bounded_and_the_error_counts_attempts(fault):
    """Fault server: 529 forever; max_attempts=3 ends with a clear overloaded error."""
    with pytest.raises(ProviderError, match=r"overloaded, HTTP 529\) after 3 attempt") as info:
        await collect(model(fault, "e529"))
    assert info.value.attempts == 3


async def test_credential_rotation_moves_to_the_next_key(fault):
    """Fault server: 401 on the first key; the second key is used at once and sticks."""
    m = model(fault, "e401,text", api_key=None, api_keys=["sk-bad", "sk-good"])
    events = await collect(m)
    assert [(e.reason, e.delay) for e in events if isinstance(e, ModelRetry)] == [("auth", 0.0)]
    sent = [r["headers"]["authorization"] for r in fault.app.state.recorder.for_model(m.model)]
    assert sent == ["Bearer sk-bad", "Bearer sk-good"]
    assert m.api_key == "sk-good"


async def test_auth_failure_without_other_keys_names_the_env_var(fault):
    """Fault server: 401 with a single key aborts and says where the key comes from."""
    with pytest.raises(ProviderError, match="OPENAI_API_KEY") as info:
        await collect(model(fault, "e401"))
    assert info.value.reason.value == "auth"


async def test_context_overflow_calls_the_compression_hook(fault):
    """Fault server: context_length_exceeded, then the hook's shorter request succeeds."""
    seen = []

    def compress(req: ModelRequest) -> ModelRequest:
        seen.append(len(req.messages))
        return ModelRequest(req.messages[-1:], req.tool_specs, req.system_prompt)

    events = await collect(model(fault, "ectx,text", compress=compress))
    assert seen == [1]
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["context_overflow"]


async def test_stalled_stream_is_cut_and_retried(fault):
    """Fault server: the first response stalls after its headers; stale_timeout cuts it."""
    policy = RetryPolicy(max_attempts=3, base_delay=0.001, stale_timeout=0.5)
    events = await collect(model(fault, "stall,text", retry=policy))
    retry = next(e for e in events if isinstance(e, ModelRetry))
    assert (retry.reason, "silent for more than 0.5 s" in retry.error) == ("timeout", True)
    assert events[-1].stop_reason == "end_turn"


async def test_stream_broken_before_any_output_is_retried(fault):
    """Fault server: the connection drops after the role chunk (nothing delivered yet)."""
    events = await collect(model(fault, "break_early,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["server_error"]


async def test_stream_broken_after_output_fails_clearly(fault):
    """Fault server: the connection drops after text was delivered; no retry, clear error."""
    m = model(fault, "break_mid,text")
    with pytest.raises(
        ProviderError, match="broke after part of the response had been delivered"
    ) as info:
        await collect(m)
    assert info.value.partial
    assert "peer closed connection" in str(info.value)
    assert len(fault.app.state.recorder.for_model(m.model)) == 1


async def test_fallback_chain_moves_on_and_restarts_from_the_primary(fault):
    """Fault server: the primary is overloaded; the chain falls back, and starts over next call."""
    primary = model(fault, "e529,text", retry=RetryPolicy(max_attempts=1))
    chain = FallbackChain([primary, model(fault, "text")])
    agent = Agent(model=chain)
    events = [e async for e in agent.stream("hi")]
    fallback = next(e for e in events if type(e).__name__ == "ModelFallback")
    assert (fallback.from_model, fallback.reason) == (primary.name, "overloaded")
    result = agent.last_result
    assert result.text == "Hello world"
    assert (result.usage.model_fallbacks, result.usage.model_retries) == (1, 0)
    await agent.invoke_async("again")  # the primary answers this time
    assert len(fault.app.state.recorder.for_model(primary.model)) == 2
    assert agent.last_result.usage.to_dict()["model_fallbacks"] == 0


async def test_lenient_tool_call_parser_for_local_servers(fault):
    """Fault server: a model writes <tool_call>{...}</tool_call> into its text content."""
    response = await assemble(model(fault, "lenient", lenient_tool_calls=True), request(tools=True))
    assert response.message.text == "Sure."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("add", {"a": 2, "b": 3})]
    plain = await assemble(model(fault, "lenient"), request(tools=True))
    assert plain.tool_calls == []  # opt-in only


async def test_non_streaming_mode(fault):
    """Fault server: streaming=False turns a whole chat.completion into the same events."""
    response = await assemble(model(fault, "tools", streaming=False), request(tools=True))
    assert [(c.id, c.arguments) for c in response.tool_calls] == [("call_w", {"a": 1, "b": 2})]


async def test_streamed_request_answered_with_whole_json(fault):
    """Fault server: stream=true answered with one application/json chat.completion (as
    llm-katan does for tool requests): read as a whole completion, not 'no chunks'."""
    response = await assemble(model(fault, "json_tools"), request(tools=True))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_w", "add", {"a": 1, "b": 2})
    ]
    assert response.stop_reason == "tool_use"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    text = await assemble(model(fault, "json_text"))
    assert (text.message.text, text.stop_reason) == ("Hello world", "end_turn")
    with pytest.raises(ProviderError, match=r"empty completion \(no choices\)") as info:
        await collect(model(fault, "json_empty"))
    assert info.value.reason.value == "format_error"


# -- bad input ----------------------------------------------------------------------------


async def test_malformed_sse_line(fault):
    """Fault server: a data line that is not JSON is a format error naming the problem."""
    with pytest.raises(ProviderError, match="not valid JSON") as info:
        await collect(model(fault, "malformed"))
    assert info.value.reason.value == "format_error"


async def test_invalid_json_in_tool_call_arguments_goes_back_to_the_model(fault):
    """Fault server: call_b's arguments are cut JSON; the model gets a tool error, call_a runs."""
    agent = Agent(model=model(fault, "badargs,text"), tools=[add])
    result = await agent.invoke_async("add")
    results = agent.messages[2].tool_results
    assert (results[0].content, results[0].is_error) == ("3", False)
    assert results[1].is_error
    assert "not valid JSON" in results[1].content
    assert result.text == "Hello world"


async def test_empty_completion(fault):
    """Fault server: a stream with no chunk at all ('data: [DONE]' only)."""
    with pytest.raises(ProviderError, match="empty completion"):
        await collect(model(fault, "empty"))
    with pytest.raises(ProviderError, match=r"empty completion \(no choices\)"):
        await collect(model(fault, "empty", streaming=False))


async def test_response_with_neither_text_nor_tool_calls(fault):
    """Fault server: finish_reason 'stop' and no content: an empty end_turn, not a crash."""
    result = await Agent(model=model(fault, "blank")).invoke_async("hi")
    assert (result.stop_reason, result.text) == ("end_turn", "")


async def test_error_body_that_is_not_json(fault):
    """Fault server: a 502 with an HTML body; the message quotes the body."""
    with pytest.raises(ProviderError, match="502 Bad Gateway") as info:
        await collect(model(fault, "e502html", retry=RetryPolicy(max_attempts=1)))
    assert (info.value.reason.value, info.value.status) == ("server_error", 502)


async def test_agent_run_fails_with_model_error_and_valid_history(fault):
    """Fault server: a permanent error inside agent.invoke ends the run with stop reason error."""
    agent = Agent(model=model(fault, "e404"))
    with pytest.raises(ModelError) as info:
        await agent.invoke_async("hi")
    assert info.value.result.stop_reason == "error"
    assert "model_not_found" in info.value.result.reason


async def test_stream_of_the_wrong_shape_is_a_provider_error_and_falls_back(fault):
    """Fault server: a chunk whose choices is a number; retried as unknown, then a fallback."""
    broken = model(fault, "garbage")
    with pytest.raises(ProviderError, match=r"unknown, no HTTP status\) after 3 attempt") as info:
        await collect(broken)
    assert (info.value.provider, info.value.attempts) == (broken.name, 3)
    assert "TypeError" in str(info.value)
    assert not info.value.partial
    broken = model(fault, "garbage")
    agent = Agent(model=FallbackChain([broken, model(fault, "text")]))
    result = await agent.invoke_async("hi")
    assert result.text == "Hello world"
    assert (result.usage.model_fallbacks, result.usage.model_retries) == (1, 2)


def suspended_sdk_streams() -> list[object]:
    """The openai SDK's stream generators still suspended at a yield (alive, not ended)."""
    return [
        g
        for g in gc.get_objects()
        if inspect.isasyncgen(g)
        and g.ag_code.co_name == "__stream__"
        and g.ag_frame is not None  # not run to its end
    ]


async def test_a_stream_of_the_wrong_shape_leaves_no_sdk_generator_suspended(fault):
    """A suspended SDK generator held by the error's traceback is finalised whenever the
    collector finds it, possibly after the loop closed ("Event loop is closed", raised at
    no one): the adapter runs the SDK's generators to their end when it stops early."""
    before = len(suspended_sdk_streams())
    with pytest.raises(ProviderError) as info:
        await collect(model(fault, "garbage", retry=RetryPolicy(max_attempts=1)))
    assert info.value.__traceback__ is not None  # the error, frames and all, is still held
    assert len(suspended_sdk_streams()) == before


async def test_an_output_schema_becomes_a_json_schema_response_format(fault):
    """Fault server (recorded request): native structured output for OpenAI."""
    m = model(fault, "text")
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    req = ModelRequest([Message.user("hi")], [], "sys", output_schema=schema, output_name="Point")
    await collect(m, req)
    body = fault.app.state.recorder.for_model(m.model)[-1]["body"]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Point", "schema": schema, "strict": False},
    }
    await collect(m, request())
    assert "response_format" not in fault.app.state.recorder.for_model(m.model)[-1]["body"]
