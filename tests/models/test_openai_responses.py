"""OpenAIResponsesModel against the fault server's Responses routes (tests/servers/responses_routes.py).

llm-katan has no ``/v1/responses``: text, parallel function calls, encrypted
reasoning items sent back (in this process and after a resume in another one),
structured output, usage, stop reasons and errors all come from the fault server.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether import Agent, tool
from tether.events import ModelRetry, ReasoningDelta, TextDelta
from tether.messages import Message, ReasoningBlock, ToolResult
from tether.models import (
    FallbackChain,
    OpenAIModel,
    OpenAIResponsesModel,
    ProviderError,
    RetryPolicy,
    model_from_string,
)
from tether.models.assembler import ResponseAssembler
from tether.models.base import ModelRequest

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.005, stale_timeout=20)
_tags = itertools.count()
ENCRYPTED = "gAAAA-encrypted-reasoning-1"


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def model(fault, plan: str, **kwargs) -> OpenAIResponsesModel:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("api_key", "sk-test")
    return OpenAIResponsesModel(f"{plan}~resp{next(_tags)}", base_url=fault.url + "/v1", **kwargs)


def request(tools: bool = False) -> ModelRequest:
    return ModelRequest([Message.user("hi")], [add.spec()] if tools else [], "be brief")


async def collect(m, req=None):
    return [e async for e in m.stream(req or request())]


async def assemble(m, req=None):
    assembler = ResponseAssembler()
    for event in await collect(m, req):
        assembler.add(event)
    return assembler.finish()


def sent(fault, m) -> list[dict]:
    return [r["body"] for r in fault.app.state.recorder.for_model(m.model)]


@pytest.mark.parametrize("streaming", [True, False])
async def test_text_usage_and_a_stateless_request(fault, streaming):
    m = model(fault, "text", streaming=streaming)
    response = await assemble(m)
    assert response.message.text == "Hello world"
    assert response.stop_reason == "end_turn"
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (11, 7, 4)
    assert usage.reasoning_tokens == 3  # of the 7 output tokens
    assert Message.from_dict(response.message.to_dict()).usage == usage  # journaled as is
    [body] = sent(fault, m)
    assert body["store"] is False
    assert "previous_response_id" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] == "be brief"
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body.get("stream", False) is streaming


async def test_text_streams_as_deltas(fault):
    events = await collect(model(fault, "text"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hell", "o wo", "rld"]


@pytest.mark.parametrize("plan", ["tools", "done_only"])
async def test_parallel_function_calls_with_interleaved_argument_deltas(fault, plan):
    """``done_only``: a server that sends a call's arguments only in output_item.done."""
    response = await assemble(model(fault, plan), request(tools=True))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_a", "add", {"a": 1, "b": 2}),
        ("call_b", "add", {"a": 10, "b": 2}),
    ]
    assert response.stop_reason == "tool_use"


async def test_tools_and_history_go_as_function_items(fault):
    m = model(fault, "text")
    calls = (await assemble(model(fault, "tools"), request(True))).tool_calls
    history = [
        Message.user("hi"),
        Message("assistant", list(calls)),
        Message("tool", [ToolResult("call_a", "add", "3"), ToolResult("call_b", "add", "12")]),
    ]
    await collect(m, ModelRequest(history, [add.spec()], "sys"))
    body = sent(fault, m)[-1]
    assert body["input"][1:] == [
        {"type": "function_call", "call_id": "call_a", "name": "add", "arguments": '{"a": 1, "b": 2}'},
        {"type": "function_call", "call_id": "call_b", "name": "add", "arguments": '{"a": 10, "b": 2}'},
        {"type": "function_call_output", "call_id": "call_a", "output": "3"},
        {"type": "function_call_output", "call_id": "call_b", "output": "12"},
    ]  # fmt: skip
    assert (body["tools"][0]["type"], body["tools"][0]["name"]) == ("function", "add")


@pytest.mark.parametrize("streaming", [True, False])
async def test_reasoning_is_journaled_signed_and_sent_back(fault, streaming):
    first = await assemble(model(fault, "reason_tools", streaming=streaming), request(True))
    [block] = [b for b in first.message.content if isinstance(b, ReasoningBlock)]
    assert block.text == "First I add.\n\nThen I answer."
    assert not block.redacted
    # the journal keeps the signature: a round trip through the message dict
    again = Message.from_dict(first.message.to_dict())
    m = model(fault, "text")
    history = [
        Message.user("hi"),
        again,
        Message("tool", [ToolResult("call_r", "add", "5")]),
    ]
    await collect(m, ModelRequest(history, [add.spec()]))
    items = sent(fault, m)[-1]["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "First I add.\n\nThen I answer."}],
        "encrypted_content": ENCRYPTED,
    }
    assert [i.get("type") for i in items[2:]] == ["function_call", "function_call_output"]


async def test_reasoning_streams_as_reasoning_never_text(fault):
    events = await collect(model(fault, "reason_tools"), request(True))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ""
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == (
        "First I add.\n\nThen I answer."
    )


async def test_encrypted_only_reasoning_is_a_redacted_block_that_is_still_sent_back(fault):
    response = await assemble(model(fault, "reason_hidden"))
    [block] = [b for b in response.message.content if isinstance(b, ReasoningBlock)]
    assert (block.text, block.redacted) == ("", True)
    m = model(fault, "text")
    await collect(m, ModelRequest([Message.user("hi"), response.message, Message.user("more")], []))
    items = sent(fault, m)[-1]["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "encrypted_content": ENCRYPTED,
    }
    assert items[2] == {"role": "assistant", "content": "Done"}


async def test_reasoning_of_other_providers_is_not_sent(fault):
    """An Anthropic thinking signature or unsigned reasoning has no Responses item."""
    m = model(fault, "text")
    history = [
        Message.user("hi"),
        Message("assistant", [ReasoningBlock("t", signature="anthropic-sig"), ReasoningBlock("u")]),
        Message.user("again"),
    ]
    await collect(m, ModelRequest(history, []))
    assert [i.get("type", i.get("role")) for i in sent(fault, m)[-1]["input"]] == ["user", "user"]


@pytest.mark.parametrize(
    ("choice", "sent_as"),
    [("required", "required"), ("none", "none"), ("add", {"type": "function", "name": "add"})],
)
async def test_a_per_call_tool_choice_is_sent_in_responses_form(fault, choice, sent_as):
    m = model(fault, "text")
    await collect(m, ModelRequest([Message.user("hi")], [add.spec()], tool_choice=choice))
    assert sent(fault, m)[-1]["tool_choice"] == sent_as
    await collect(m, request(tools=True))
    assert "tool_choice" not in sent(fault, m)[-1]  # None: the provider's default


async def test_structured_output_is_a_json_schema_text_format(fault):
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    m = model(fault, "text", max_tokens=99)
    await collect(m, ModelRequest([Message.user("hi")], [], output_schema=schema, output_name="P"))
    body = sent(fault, m)[-1]
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "P", "schema": schema, "strict": False}
    }
    assert body["max_output_tokens"] == 99


@pytest.mark.parametrize(
    ("plan", "stop"), [("incomplete", "max_tokens"), ("filtered", "content_filter")]
)
async def test_incomplete_responses_map_to_stop_reasons(fault, plan, stop):
    assert (await assemble(model(fault, plan))).stop_reason == stop


@pytest.mark.parametrize(
    ("plan", "reason"),
    [("failed", "server_error"), ("error_event", "rate_limit"), ("e529", "overloaded")],
)
async def test_stream_failures_are_classified_and_retried(fault, plan, reason):
    events = await collect(model(fault, f"{plan},text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == [reason]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello world"


async def test_a_whole_failed_response_is_classified(fault):
    with pytest.raises(ProviderError, match="error processing it") as info:
        await collect(model(fault, "failed", streaming=False))
    assert (info.value.reason.value, info.value.attempts) == ("server_error", 3)


@pytest.mark.parametrize(
    ("plan", "reason", "status"),
    [("ectx", "context_overflow", 400), ("e404", "model_not_found", 404), ("e402", "billing", 402)],
)
async def test_permanent_http_errors_abort_at_once(fault, plan, reason, status):
    m = model(fault, plan)
    with pytest.raises(ProviderError) as info:
        await collect(m)
    assert (info.value.reason.value, info.value.status, info.value.attempts) == (reason, status, 1)
    assert len(sent(fault, m)) == 1


async def test_a_stream_without_response_completed_is_broken_and_retried(fault):
    events = await collect(model(fault, "cut,text"))
    assert [e.reason for e in events if isinstance(e, ModelRetry)] == ["server_error"]


async def test_key_rotation_after_a_401(fault):
    m = model(fault, "e401,text", api_key=None, api_keys=["sk-bad", "sk-good"])
    await collect(m)
    got = [r["headers"]["authorization"] for r in fault.app.state.recorder.for_model(m.model)]
    assert got == ["Bearer sk-bad", "Bearer sk-good"]


async def test_a_whole_json_body_to_a_stream_request_is_a_whole_response(fault):
    """A server that answers ``stream=true`` with one application/json response."""
    m = model(fault, "json_reason_tools")
    response = await assemble(m, request(True))
    assert sent(fault, m)[0]["stream"] is True
    assert [(c.id, c.arguments) for c in response.tool_calls] == [("call_r", {"a": 2, "b": 3})]
    [block] = [b for b in response.message.content if isinstance(b, ReasoningBlock)]
    assert (block.text, ENCRYPTED in (block.signature or "")) == (
        "First I add.\n\nThen I answer.",
        True,
    )
    with pytest.raises(ProviderError, match="not a response object") as info:
        await collect(model(fault, "json_garbage"))
    assert info.value.reason.value == "format_error"


async def test_a_rate_limit_error_event_rotates_to_the_next_key(fault):
    """An in-stream ``error`` event (HTTP 200) keeps its code: rate_limit rotates keys."""
    m = model(fault, "error_event,text", api_key=None, api_keys=["sk-one", "sk-two"])
    events = await collect(m)
    assert [(e.reason, e.delay) for e in events if isinstance(e, ModelRetry)] == [
        ("rate_limit", 0.0)
    ]
    assert m.api_key == "sk-two"


async def test_fallback_chain_moves_on_after_a_classified_error(fault):
    chat = OpenAIModel(f"text~resp{next(_tags)}", base_url=fault.url + "/v1", api_key="sk-test")
    chain = FallbackChain([model(fault, "e404"), chat])
    result = await Agent(model=chain).invoke_async("hi")
    assert result.text == "Hello world"


def test_the_model_string(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    built = model_from_string("openai-responses:o4-mini")
    assert isinstance(built, OpenAIResponsesModel)
    assert built.name == "openai-responses:o4-mini"


async def test_an_agent_runs_tools_and_keeps_reasoning_across_turns(fault):
    m = model(fault, "reason_tools,text")
    result = await Agent(model=m, tools=[add]).invoke_async("add 2 and 3")
    assert result.text == "Hello world"
    second = sent(fault, m)[1]["input"]
    assert (second[1]["type"], second[1]["encrypted_content"]) == ("reasoning", ENCRYPTED)
    assert second[3] == {"type": "function_call_output", "call_id": "call_r", "output": "5"}


def test_reasoning_survives_a_resume_in_another_process(fault, tmp_path):
    """A real second process resumes the session; its request carries the reasoning item."""
    child = Path(__file__).parents[1] / "support" / "responses_resume_child.py"
    db, effects = tmp_path / "tether.db", tmp_path / "effects.txt"
    name = f"reason_clean,text~resp{next(_tags)}"

    def run(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, str(child), fault.url + "/v1", name, str(db), str(effects), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run("start")
    assert first["stop_reason"] == "interrupt"
    [interrupt] = first["interrupts"]
    second = run("resume", json.dumps({interrupt: "approve"}))
    assert (second["stop_reason"], second["text"]) == ("end_turn", "Hello world")
    assert effects.read_text() == "clean *.tmp\n"
    bodies = [r["body"] for r in fault.app.state.recorder.for_model(name)]
    assert len(bodies) == 2
    items = bodies[1]["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "The temp files must go."}],
        "encrypted_content": ENCRYPTED,
    }
    assert (items[2]["type"], items[2]["call_id"]) == ("function_call", "call_c")
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "call_c",
        "output": "deleted 2 files",
    }
    assert "previous_response_id" not in bodies[1]


def test_importing_the_adapter_loads_no_sdk():
    """``import tether.models`` (and the adapter's own modules) leave openai unloaded."""
    code = (
        "import sys, tether, tether.models, tether.models.openai_responses_model;"
        "from tether.models import OpenAIResponsesModel;"
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
