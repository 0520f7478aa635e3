import asyncio

import pytest

from tether import ConfigurationError
from tether.errors import ScriptExhaustedError
from tether.events import ModelStop, ReasoningDelta, TextDelta, ToolCallDelta
from tether.messages import Message
from tether.models import ModelRequest, ScriptedModel


def collect(model: ScriptedModel, messages: list[Message] | None = None) -> list[object]:
    request = ModelRequest(messages or [Message.user("hello there")], [], "be brief")

    async def run() -> list[object]:
        return [e async for e in model.stream(request)]

    return asyncio.run(run())


def test_text_is_streamed_in_chunks_with_plausible_usage():
    model = ScriptedModel(["The answer is three, of course."], chunk_size=8)
    events = collect(model)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas) == "The answer is three, of course."
    assert len(deltas) == 4
    stop = events[-1]
    assert isinstance(stop, ModelStop)
    assert stop.stop_reason == "end_turn"
    assert stop.usage.input_tokens == len("hello therebe brief") // 4
    assert stop.usage.output_tokens == len("The answer is three, of course.") // 4


def test_tool_calls_reasoning_and_explicit_ids():
    model = ScriptedModel(
        [
            {
                "reasoning": "need to add",
                "text": "adding",
                "tool_calls": [
                    {"name": "add", "args": {"a": 1}},
                    {"name": "sub", "arguments": {"b": 2}, "id": "mine"},
                ],
            }
        ]
    )
    events = collect(model)
    assert isinstance(events[0], ReasoningDelta)
    assert events[0].text == "need to add"
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(c.index, c.id, c.name, c.arguments) for c in calls] == [
        (0, "call_1_0", "add", {"a": 1}),
        (1, "mine", "sub", {"b": 2}),
    ]
    assert isinstance(events[-1], ModelStop)
    assert events[-1].stop_reason == "tool_use"


def test_callable_script_sees_messages_and_tools():
    seen = []

    def script(messages, tools):
        seen.append((len(messages), tools))
        return "ok"

    model = ScriptedModel(script)
    collect(model)
    assert seen == [(1, [])]
    assert model.remaining is None
    assert model.calls == 1


def test_running_out_is_a_clear_error():
    model = ScriptedModel(["only"])
    collect(model)
    assert model.remaining == 0
    with pytest.raises(ScriptExhaustedError, match=r"given 1 turn\(s\) and this is call 2"):
        collect(model)


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ([{"txt": "typo"}], r"turn 0 has unknown key\(s\) \['txt'\]"),
        ([42], "turn 0 must be a dict or a string"),
        ([{"tool_calls": [{"args": {}}]}], "tool call 0 needs a 'name' string"),
        ([{"tool_calls": [{"name": "x", "argz": {}}]}], r"unknown key\(s\) \['argz'\]"),
        ([{"text": "x", "stop_reason": "halt"}], "stop_reason 'halt' is not one of"),
        ("not a list", "takes a list of turns or a callable"),
    ],
)
def test_bad_scripts_are_refused_at_construction(script, message):
    with pytest.raises(ConfigurationError, match=message):
        ScriptedModel(script)


def test_bad_turn_from_a_callable_is_refused_when_played():
    model = ScriptedModel(lambda m, t: {"texts": "x"})
    with pytest.raises(ConfigurationError, match="unknown key"):
        collect(model)


def test_chunk_size_must_be_positive():
    with pytest.raises(ConfigurationError, match="chunk_size must be >= 1"):
        ScriptedModel(["x"], chunk_size=0)
