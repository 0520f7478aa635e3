"""GeminiModel against the project's fault server (tests/servers/gemini_routes.py).

What llm-katan cannot play: thought parts and signatures carried back, parallel
function calls, cached-token usage, safety blocks of the response and of the prompt,
structured output, and Google's error bodies mapped to tether's failover reasons.
"""

from __future__ import annotations

import base64
import itertools

import pytest

from tether import Agent, tool
from tether.events import ModelFallback, ModelRetry, TextDelta
from tether.messages import Image, Message, ReasoningBlock, TextBlock, ToolCall, ToolResult
from tether.models import FallbackChain, GeminiModel, OpenAIModel, ProviderError, RetryPolicy
from tether.models.assembler import ResponseAssembler
from tether.models.base import ModelRequest
from tether.models.failover import FailoverReason as R

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
ONCE = RetryPolicy(max_attempts=1, stale_timeout=20)
_names = itertools.count()


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def gemini(fault, plan: str, **kwargs) -> GeminiModel:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("api_key", "gk-test")
    return GeminiModel(f"{plan}~g{next(_names)}", base_url=fault.url, **kwargs)


def sent(fault, model: GeminiModel) -> list[dict]:
    return fault.app.state.recorder.for_model(model.model)


def wire(obj: dict, camel: str):
    """A field of a request body: google-genai sends nested fields under their proto
    names (snake_case), which Google's JSON parsing accepts beside camelCase."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return obj[camel] if camel in obj else obj[snake]


REQUEST = ModelRequest([Message.user("hi")], [add.spec()], "be brief")


async def assemble(model, req=REQUEST):
    assembler = ResponseAssembler()
    events = [e async for e in model.stream(req)]
    for event in events:
        assembler.add(event)
    return assembler.finish(), events


@pytest.mark.parametrize("streaming", [True, False])
async def test_text_system_instruction_and_key_header(fault, streaming):
    model = gemini(fault, "text", streaming=streaming)
    response, events = await assemble(model)
    assert response.message.text == "Hello"
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 5)
    [request] = sent(fault, model)
    assert request["path"].endswith(":streamGenerateContent" if streaming else ":generateContent")
    assert request["headers"]["x-goog-api-key"] == "gk-test"
    body = request["body"]
    assert body["systemInstruction"]["parts"] == [{"text": "be brief"}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "add"
    assert wire(declaration, "parametersJsonSchema")["required"] == ["a", "b"]
    if streaming:
        assert [e.text for e in events if type(e) is TextDelta] == ["Hel", "lo"]


@pytest.mark.parametrize("streaming", [True, False])
async def test_parallel_calls_and_their_signature_go_back(fault, streaming):
    """Two functionCall parts without ids; the first one's thoughtSignature travels back
    on that call's part, and both results go back as functionResponse parts."""
    model = gemini(fault, "calls,text", streaming=streaming)
    response, _ = await assemble(model)
    assert response.stop_reason == "tool_use"
    calls = response.tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": 3, "b": 4}),
    ]
    assert len({c.id for c in calls}) == 2
    results = Message(
        "tool",
        [ToolResult(calls[0].id, "add", "3"), ToolResult(calls[1].id, "add", "boom", True)],
    )
    follow = ModelRequest([Message.user("hi"), response.message, results], [add.spec()])
    second, _ = await assemble(model, follow)
    assert second.message.text == "Hello"
    contents = sent(fault, model)[1]["body"]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    model_parts = contents[1]["parts"]
    assert model_parts[0] == {"text": "Calling."}
    assert model_parts[1]["functionCall"] == {"name": "add", "args": {"a": 1, "b": 2}}
    assert base64.b64decode(model_parts[1]["thoughtSignature"]) == b"\x01sig-of-the-call"
    assert "thoughtSignature" not in model_parts[2]
    assert [p["functionResponse"] for p in contents[2]["parts"]] == [
        {"name": "add", "response": {"output": "3"}},
        {"name": "add", "response": {"error": "boom"}},
    ]


async def test_thoughts_and_the_text_signature(fault):
    model = gemini(fault, "think,text", thoughts=True, thinking_budget=512)
    response, _ = await assemble(model)
    [reasoning] = [b for b in response.message.content if type(b) is ReasoningBlock]
    assert reasoning.text == "let me see"
    assert response.message.text == "Done"
    assert response.usage.output_tokens == 32  # candidates + thoughts
    config = sent(fault, model)[0]["body"]["generationConfig"]
    thinking = wire(config, "thinkingConfig")
    assert (wire(thinking, "includeThoughts"), wire(thinking, "thinkingBudget")) == (True, 512)
    follow = ModelRequest([Message.user("hi"), response.message, Message.user("more")], [])
    await assemble(model, follow)
    [part] = sent(fault, model)[1]["body"]["contents"][1]["parts"]
    assert part["text"] == "Done"
    assert base64.b64decode(part["thoughtSignature"]) == b"\x02sig-of-the-text"


async def test_cached_tokens_in_usage(fault):
    response, _ = await assemble(gemini(fault, "cached"))
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (320, 300, 4)
    assert GeminiModel.cached_in_input


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_blocked_response_is_a_content_filter_stop_with_a_message(fault, streaming):
    response, _ = await assemble(gemini(fault, "safety", streaming=streaming))
    assert response.stop_reason == "content_filter"
    assert response.message.text == (
        "[Gemini blocked the response: SAFETY (DANGEROUS_CONTENT: HIGH)]"
    )


async def test_a_blocked_prompt_is_a_content_filter_stop_and_the_run_says_blocked(fault):
    model = gemini(fault, "blocked")
    response, _ = await assemble(model)
    assert response.stop_reason == "content_filter"
    assert response.message.text == "[Gemini blocked the prompt: SAFETY (HARASSMENT: HIGH)]"
    result = await Agent(model=gemini(fault, "blocked")).invoke_async("hi")
    assert result.stop_reason == "blocked"
    assert result.text == "[Gemini blocked the prompt: SAFETY (HARASSMENT: HIGH)]"


async def test_max_tokens_stop_and_the_limit_sent(fault):
    model = gemini(fault, "length", max_tokens=64)
    response, _ = await assemble(model)
    assert response.stop_reason == "max_tokens"
    assert sent(fault, model)[0]["body"]["generationConfig"]["maxOutputTokens"] == 64


async def test_native_structured_output_without_tools(fault):
    model = gemini(fault, "json")
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "score": {"type": "integer"}},
        "required": ["label", "score"],
    }
    req = ModelRequest([Message.user("classify")], [], output_schema=schema)
    response, _ = await assemble(model, req)
    assert response.message.text == '{"label": "spam", "score": 9}'
    config = sent(fault, model)[0]["body"]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == schema


async def test_structured_output_with_tools_goes_through_the_final_answer_tool(fault):
    model = gemini(fault, "final_ok")
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    req = ModelRequest([Message.user("classify")], [add.spec()], output_schema=schema)
    response, _ = await assemble(model, req)
    assert response.message.text == '{"label": "ham", "score": 2}'
    assert response.stop_reason == "end_turn"
    body = sent(fault, model)[0]["body"]
    names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    assert names == ["add", "final_answer"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}
    assert "responseJsonSchema" not in body.get("generationConfig", {})


async def test_tool_images_follow_the_function_responses_as_inline_data(fault):
    model = gemini(fault, "text")
    png = base64.b64encode(b"\x89PNG fake").decode()
    call = ToolCall("call_1", "shot", {})
    result = ToolResult("call_1", "shot", "[1 image]", images=(Image("image/png", png),))
    req = ModelRequest(
        [Message.user("look"), Message("assistant", [call]), Message("tool", [result])], []
    )
    await assemble(model, req)
    parts = sent(fault, model)[0]["body"]["contents"][2]["parts"]
    assert parts[0]["functionResponse"] == {
        "id": "call_1",
        "name": "shot",
        "response": {"output": "[1 image]"},
    }
    assert parts[1] == {"text": "The image returned by tool call call_1 (shot):"}
    inline = wire(parts[2], "inlineData")
    assert (wire(inline, "mimeType"), inline["data"]) == ("image/png", png)


@pytest.mark.parametrize(
    ("step", "reason", "status"),
    [
        ("e429slow", R.RATE_LIMIT, 429),
        ("ectx", R.CONTEXT_OVERFLOW, 400),
        ("ekey", R.AUTH, 400),
        ("efmt", R.FORMAT_ERROR, 400),
        ("e403", R.AUTH_PERMANENT, 403),
        ("e404", R.MODEL_NOT_FOUND, 404),
        ("e500", R.SERVER_ERROR, 500),
        ("e503", R.OVERLOADED, 503),
        ("e504", R.TIMEOUT, 504),
    ],
)
async def test_errors_are_classified(fault, step, reason, status):
    with pytest.raises(ProviderError) as caught:
        await assemble(gemini(fault, step, retry=ONCE))
    error = caught.value
    assert (error.reason, error.status, error.provider) == (reason, status, error.provider)
    assert error.provider.startswith("gemini:")
    assert "GEMINI_API_KEY" in str(error) or reason is not R.AUTH


async def test_rate_limit_waits_for_retry_info_then_succeeds(fault):
    model = gemini(fault, "e429,text")
    response, events = await assemble(model)
    assert response.message.text == "Hello"
    [retry] = [e for e in events if type(e) is ModelRetry]
    assert (retry.reason, retry.delay) == ("rate_limit", 0.01)


async def test_a_retry_delay_beyond_the_policy_fails_at_once(fault):
    model = gemini(fault, "e429slow")
    with pytest.raises(ProviderError, match="asked to wait 3600 s"):
        await assemble(model)
    assert len(sent(fault, model)) == 1


async def test_an_invalid_key_rotates_to_the_next(fault):
    model = gemini(fault, "ekey,text", api_key=None, api_keys=["bad", "good"])
    response, _ = await assemble(model)
    assert response.message.text == "Hello"
    keys = [r["headers"]["x-goog-api-key"] for r in sent(fault, model)]
    assert keys == ["bad", "good"]


async def test_server_errors_are_retried(fault):
    response, events = await assemble(gemini(fault, "e503,e500,text"))
    assert response.message.text == "Hello"
    assert [e.reason for e in events if type(e) is ModelRetry] == ["overloaded", "server_error"]


async def test_a_stream_without_finish_reason_is_broken_and_retried(fault):
    with pytest.raises(ProviderError) as caught:
        await assemble(gemini(fault, "broken", retry=ONCE))
    assert "without a finishReason" in str(caught.value)
    assert caught.value.partial  # "partial" had been streamed


async def test_a_malformed_function_call_is_a_format_error(fault):
    with pytest.raises(ProviderError) as caught:
        await assemble(gemini(fault, "malformed", retry=ONCE))
    assert caught.value.reason is R.FORMAT_ERROR
    assert "MALFORMED_FUNCTION_CALL" in str(caught.value)


async def test_fallback_chain_moves_to_openai_on_a_classified_gemini_error(fault):
    primary = gemini(fault, "e503", retry=ONCE)
    backup = OpenAIModel("text~gfb", base_url=fault.url + "/v1", api_key="sk-test", retry=ONCE)
    agent = Agent(model=FallbackChain([primary, backup]))
    events = [e async for e in agent.stream("hi")]
    [fallback] = [e for e in events if type(e) is ModelFallback]
    assert fallback.reason == "overloaded"
    result = events[-1].result
    assert result.text == "Hello world"


async def test_an_agent_runs_tools_over_gemini(fault):
    model = gemini(fault, "calls,text")
    result = await Agent(model=model, tools=[add]).invoke_async("add")
    assert result.text == "Hello"
    parts = sent(fault, model)[1]["body"]["contents"][-1]["parts"]
    outputs = [wire(p, "functionResponse")["response"]["output"] for p in parts]
    assert outputs == ["3", "7"]


async def test_another_providers_signature_is_not_sent(fault):
    model = gemini(fault, "text")
    history = Message(
        "assistant",
        [ReasoningBlock("thought", signature="anthropic-sig"), TextBlock("earlier")],
    )
    await assemble(model, ModelRequest([Message.user("a"), history, Message.user("b")], []))
    [part] = sent(fault, model)[0]["body"]["contents"][1]["parts"]
    assert part == {"text": "earlier"}


async def test_output_tool_false_sends_the_schema_beside_tools(fault):
    model = gemini(fault, "json", output_tool=False)
    schema = {"type": "object", "properties": {"label": {"type": "string"}}}
    req = ModelRequest([Message.user("classify")], [add.spec()], output_schema=schema)
    response, _ = await assemble(model, req)
    assert response.message.text == '{"label": "spam", "score": 9}'
    body = sent(fault, model)[0]["body"]
    assert body["generationConfig"]["responseJsonSchema"] == schema
    assert "toolConfig" not in body


async def test_an_error_inside_the_stream_after_output_fails_as_partial(fault):
    with pytest.raises(ProviderError) as caught:
        await assemble(gemini(fault, "mid_error"))
    assert (caught.value.reason, caught.value.partial) == (R.OVERLOADED, True)


async def test_an_error_inside_the_stream_before_output_is_retried(fault):
    response, events = await assemble(gemini(fault, "early_error,text"))
    assert response.message.text == "Hello"
    assert [e.reason for e in events if type(e) is ModelRetry] == ["overloaded"]


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("required", {"mode": "ANY"}),
        ("none", {"mode": "NONE"}),
        ("add", {"mode": "ANY", "allowedFunctionNames": ["add"]}),
    ],
)
async def test_a_hooks_tool_choice_is_sent_as_the_function_calling_config(fault, choice, config):
    model = gemini(fault, "text")
    req = ModelRequest([Message.user("hi")], [add.spec()], "be brief", tool_choice=choice)
    await assemble(model, req)
    body = sent(fault, model)[0]["body"]
    calling = wire(wire(body, "toolConfig"), "functionCallingConfig")
    assert {k: wire(calling, k) for k in config} == config


async def test_no_tool_choice_sends_no_tool_config(fault):
    model = gemini(fault, "text")
    await assemble(model)
    assert "toolConfig" not in sent(fault, model)[0]["body"]
