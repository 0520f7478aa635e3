import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tether import ConfigurationError
from tether.errors import ScriptExhaustedError
from tether.events import ModelStop, ReasoningDelta, TextDelta, ToolCallDelta
from tether.messages import Message, ToolCall
from tether.models import ModelRequest, ScriptedModel
from tether.models.assembler import ResponseAssembler


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


# -- a list script is played by position in the conversation -----------------------------

SCRIPT = [
    {"tool_calls": [{"name": "look", "args": {"path": "/tmp"}}]},
    {"text": "cleaning", "tool_calls": [{"name": "clean", "args": '{"all": true}', "id": "c9"}]},
    "all clean",
]


def conversation(*assistant: Message) -> list[Message]:
    out = [Message.user("go")]
    for message in assistant:
        out += [message, Message("tool", [])]
    return out


def played(turn: int) -> Message:
    """The assistant message that a fresh model's playing of SCRIPT[turn] produces."""
    events = collect(ScriptedModel(SCRIPT[turn:]))
    assembler = ResponseAssembler()
    for event in events:
        assembler.add(event)
    return assembler.finish().message


def text_of(events: list[object]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_a_fresh_list_script_continues_after_the_turns_the_conversation_holds():
    model = ScriptedModel(SCRIPT)
    events = collect(model, conversation(played(0), played(1)))
    assert text_of(events) == "all clean"
    assert model.remaining == 0
    with pytest.raises(
        ScriptExhaustedError,
        match=r"given 3 turn\(s\) \(the conversation already held its first 2\) and this is call 2",
    ):
        collect(model, conversation(played(0), played(1)))


def test_after_its_first_call_a_list_script_plays_the_next_turn_each_call():
    model = ScriptedModel(SCRIPT)
    assert [c.name for c in collect(model) if isinstance(c, ToolCallDelta)] == ["look"]
    assert model.remaining == 2
    again = collect(model)  # same conversation (a hook-requested retry): the next turn
    assert [c.id for c in again if isinstance(c, ToolCallDelta)] == ["c9"]


def test_a_conversation_of_another_models_turns_starts_the_script_at_turn_0():
    other = Message.assistant("hello from another model")
    model = ScriptedModel(SCRIPT)
    events = collect(model, conversation(other, played(0)))
    assert [c.name for c in events if isinstance(c, ToolCallDelta)] == ["look"]
    changed = Message(
        "assistant", [ToolCall("call_1_0", "look", {"path": "/home"})]
    )  # same tool, other arguments: not this script's turn
    events = collect(ScriptedModel(SCRIPT), conversation(changed))
    assert [c.name for c in events if isinstance(c, ToolCallDelta)] == ["look"]


def test_a_list_scripted_durable_session_finishes_in_a_second_process(tmp_path):
    """The README's durable example, one process per step, on one SQLite file."""
    child = Path(__file__).parents[1] / "support" / "scripted_resume_child.py"
    db, effects = tmp_path / "tether.db", tmp_path / "effects.txt"

    def run(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, str(child), str(db), str(effects), *args],
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
    assert not effects.exists()
    second = run("resume", json.dumps({interrupt: "approve"}))
    assert second == {
        "stop_reason": "end_turn",
        "text": "Cleaned up the temp files.",
        "interrupts": [],
    }
    assert effects.read_text() == "clean *.tmp\n"  # approved once, run once


class _CountingBlocks(list):  # type: ignore[type-arg]
    """A message's content that counts how often it is walked."""

    walks = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        _CountingBlocks.walks += 1
        return super().__iter__()


async def test_usage_estimate_reads_only_the_new_messages_of_a_growing_conversation():
    from tether.messages import Message, TextBlock
    from tether.models.base import ModelRequest

    model = ScriptedModel(lambda messages, tools: "ok")
    history = [Message("user", _CountingBlocks([TextBlock("abcd" * 10)])) for _ in range(500)]

    async def usage_of(messages: list[Message]) -> int:
        events = [e async for e in model.stream(ModelRequest(list(messages), []))]
        return events[-1].usage.input_tokens

    first = await usage_of(history)
    assert first == 500 * 10
    history.append(Message("user", _CountingBlocks([TextBlock("abcd" * 10)])))
    _CountingBlocks.walks = 0
    assert await usage_of(history) == 501 * 10
    assert _CountingBlocks.walks == 1  # the new message only, not the 500 before it
    # a different conversation is counted from scratch
    assert await usage_of(history[:3]) == 3 * 10
