import asyncio
import json
import threading

import pytest

from tether import Agent, AgentBusyError, ConfigurationError, Message, tool
from tether.control import BeforeToolCall as ToolStartedHook
from tether.events import (
    FinalResult,
    MessageCompleted,
    ModelCallFinished,
    ModelCallStarted,
    TextDelta,
    ToolCallDelta,
    ToolFinished,
    ToolStarted,
)
from tether.models import ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def add_script() -> ScriptedModel:
    return ScriptedModel(
        [{"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, {"text": "The answer is 3."}]
    )


def test_agent_without_model_explains_how_to_choose(monkeypatch):
    monkeypatch.delenv("TETHER_MODEL", raising=False)
    with pytest.raises(ConfigurationError) as info:
        Agent()
    text = str(info.value)
    assert "needs a model" in text
    assert "ScriptedModel" in text
    assert "TETHER_MODEL" in text


def test_model_from_tether_model_env(monkeypatch, tmp_path):
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(["hello from a file"]))
    monkeypatch.setenv("TETHER_MODEL", f"scripted:{script}")
    agent = Agent()
    assert agent("hi").text == "hello from a file"
    assert agent.model.name == "scripted:turns.json"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4", "must look like 'provider:model'"),
        ("nope:model", "provider 'nope'"),
        ("scripted:/does/not/exist.json", "cannot read the ScriptedModel script"),
    ],
)
def test_bad_model_strings(spec, message):
    with pytest.raises(ConfigurationError, match=message):
        Agent(model=spec)


def test_model_of_wrong_type():
    with pytest.raises(ConfigurationError, match="model must be a Model"):
        Agent(model=42)  # type: ignore[arg-type]


def test_duplicate_tool_names_are_refused():
    with pytest.raises(ConfigurationError, match="two tools are named 'add'"):
        Agent(model=add_script(), tools=[add, add])


def test_result_fields():
    agent = Agent(model=add_script(), tools=[add], session_id="s-1", store=None)
    result = agent("What is 1 + 2?")
    assert result.stop_reason == "end_turn"
    assert result.text == "The answer is 3."
    assert str(result) == "The answer is 3."
    assert result.message is agent.messages[-1]
    assert result.session_id == "s-1"
    assert result.interrupts == []
    usage = result.usage
    assert usage.model_calls == 2
    assert usage.tool_calls == 1
    assert usage.input_tokens > 0
    assert usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert agent.last_result is result


def test_run_call_and_invoke_async_drive_the_same_loop():
    agent = Agent(model=add_script(), tools=[add])
    first = agent.run("q")
    agent.reset()
    agent.model = add_script()
    second = asyncio.run(agent.invoke_async("q"))
    assert first.text == second.text == "The answer is 3."
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool", "assistant"]


async def test_stream_yields_typed_events_in_order():
    agent = Agent(model=add_script(), tools=[add])
    kinds = [type(e) async for e in agent.stream("q")]
    assert kinds == [
        MessageCompleted,  # user
        ModelCallStarted,
        ToolCallDelta,
        ModelCallFinished,
        MessageCompleted,  # assistant with the call
        ToolStarted,
        ToolFinished,
        MessageCompleted,  # tool results
        ModelCallStarted,
        TextDelta,
        ModelCallFinished,
        MessageCompleted,  # final answer
        FinalResult,
    ]


async def test_sync_facade_works_inside_a_running_loop():
    agent = Agent(model=add_script(), tools=[add])
    assert agent("q").text == "The answer is 3."


def test_conversation_is_kept_across_invocations_and_reset_starts_afresh():
    seen: list[int] = []

    def script(messages, tools):
        seen.append(len(messages))
        return {"text": f"reply {len(seen)}"}

    agent = Agent(model=ScriptedModel(script))
    first_session = agent.session_id
    agent("one")
    agent("two")
    assert seen == [1, 3]
    agent.state["k"] = 1
    agent.reset()
    assert agent.messages == []
    assert agent.state == {}
    assert agent.last_result is None
    assert agent.session_id != first_session
    agent("three")
    assert seen == [1, 3, 1]


def test_reset_keeps_an_explicit_session_id():
    agent = Agent(model=ScriptedModel(["a"]), session_id="mine", store=None)
    agent.reset()
    assert agent.session_id == "mine"


def test_prompt_forms():
    agent = Agent(model=ScriptedModel(["a", "b", "c"]))
    agent(Message.user("as message"))
    agent([Message.user("one"), Message.user("two")])
    assert [m.text for m in agent.messages if m.role == "user"] == ["as message", "one", "two"]
    with pytest.raises(TypeError, match="a prompt is a str, a Message or a list of Messages"):
        agent(42)  # type: ignore[arg-type]


async def test_concurrent_invocation_on_one_agent_is_refused():
    gate = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait for the gate."""
        await gate.wait()
        return "done"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "wait", "args": {}}]}, "finished"]),
        tools=[wait],
    )
    entered = asyncio.Event()

    @agent.on(ToolStartedHook)
    def mark(event: ToolStartedHook) -> None:
        entered.set()

    first = asyncio.ensure_future(agent.invoke_async("go"))
    await asyncio.wait_for(entered.wait(), 5)
    with pytest.raises(AgentBusyError, match="one invocation at a time"):
        await agent.invoke_async("again")
    with pytest.raises(AgentBusyError, match="cannot reset while it runs"):
        agent.reset()
    gate.set()
    result = await first
    assert result.text == "finished"
    # nothing from the refused call leaked into the conversation
    assert [m.text for m in agent.messages if m.role == "user"] == ["go"]


def test_concurrent_invocation_from_two_threads_is_refused():
    started = threading.Event()
    release = threading.Event()

    @tool
    def block() -> str:
        """Block until released."""
        started.set()
        release.wait(5)
        return "ok"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "block", "args": {}}]}, "done"]),
        tools=[block],
    )
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(agent("first")))
    worker.start()
    assert started.wait(5)
    with pytest.raises(AgentBusyError):
        agent("second")
    release.set()
    worker.join(5)
    assert outcome
    assert outcome[0].text == "done"


async def test_breaking_out_of_the_stream_keeps_history_valid_and_frees_the_agent():
    agent = Agent(model=add_script(), tools=[add])
    stream = agent.stream("q")
    async for event in stream:
        if isinstance(event, ToolStarted):
            break
    await stream.aclose()
    # the open tool call was answered so the history stays valid
    assert agent.messages[-1].role == "tool"
    assert agent.messages[-1].tool_results[0].status == "cancelled"
    assert agent.last_result is not None
    assert agent.last_result.stop_reason == "cancelled"
    agent.model = ScriptedModel(["again"])
    assert (await agent.invoke_async("next")).text == "again"


def test_repr_names_model_and_tools():
    agent = Agent(model=add_script(), tools=[add], session_id="s", store=None)
    assert repr(agent) == "Agent(model='scripted', tools=['add'], session_id='s')"
