"""Buffered output (a generic loop feature) and verdict-gated persistence of AGENT-HOOKS runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether import Agent, Execution
from tether.control import BeforeOutput
from tether.durable import SQLiteStore
from tether.events import FinalResult, ModelCallFinished, ReasoningDelta, TextDelta
from tether.messages import Message
from tether.models import ScriptedModel

SECRET = "the launch code is 0000"


def deny_output(ctx: dict[str, Any]) -> dict[str, Any]:
    if ctx["interception_point"] == "output":
        return {"decision": "deny", "reason": "p:leak"}
    return {"decision": "allow"}


def redact_output(ctx: dict[str, Any]) -> dict[str, Any]:
    if ctx["interception_point"] == "output":
        path = {"path": "$target.content", "value": "[redacted]"}
        return {"decision": "transform", "reason": "p:redact", "transform": path}
    return {"decision": "allow"}


async def collect(agent: Agent, prompt: str) -> list[Any]:
    return [event async for event in agent.stream(prompt)]


def streamed_text(events: list[Any]) -> str:
    return "".join(e.text for e in events if type(e) in (TextDelta, ReasoningDelta))


async def test_a_consumer_sees_no_token_of_a_denied_answer() -> None:
    model = ScriptedModel([{"text": SECRET, "reasoning": "thinking about " + SECRET}], chunk_size=3)
    agent = Agent(model=model, agent_hooks=[deny_output])
    events = await collect(agent, "tell me")
    assert SECRET not in streamed_text(events)
    assert "thinking" not in streamed_text(events)
    assert not any(type(e) is ModelCallFinished for e in events)
    assert all(SECRET not in repr(e) for e in events[:-1])
    final = events[-1]
    assert type(final) is FinalResult
    assert final.result.stop_reason == "blocked"


async def test_released_text_is_exactly_the_transformed_answer() -> None:
    agent = Agent(model=ScriptedModel([SECRET], chunk_size=3), agent_hooks=[redact_output])
    events = await collect(agent, "tell me")
    assert streamed_text(events) == "[redacted]"
    finished = [e for e in events if type(e) is ModelCallFinished]
    assert finished[0].response.message.text == "[redacted]"


async def test_buffering_is_a_generic_option_off_by_default() -> None:
    plain = await collect(Agent(model=ScriptedModel(["abcdef"], chunk_size=2)), "x")
    assert [e.text for e in plain if type(e) is TextDelta] == ["ab", "cd", "ef"]
    agent = Agent(
        model=ScriptedModel(["abcdef"], chunk_size=2), execution=Execution(buffer_output=True)
    )

    @agent.on(BeforeOutput)
    def shout(event: BeforeOutput) -> None:
        event.message = Message.assistant(event.message.text.upper())

    events = await collect(agent, "x")
    assert [e.text for e in events if type(e) is TextDelta] == ["ABCDEF"]
    assert events[-1].result.text == "ABCDEF"
    off = Agent(model=ScriptedModel(["abc"]), agent_hooks=[lambda c: {"decision": "allow"}],
                execution=Execution(buffer_output=False))  # fmt: skip
    assert streamed_text(await collect(off, "x")) == "abc"


async def test_before_output_block_stops_the_run_before_anything_is_kept() -> None:
    agent = Agent(model=ScriptedModel(["final words"]))
    agent.hooks.add(BeforeOutput, lambda e: setattr(e, "block", "not today"))
    result = await agent.invoke_async("x")
    assert result.stop_reason == "blocked"
    assert result.reason == "not today"
    assert [m.role for m in agent.messages] == ["user"]


async def test_denied_content_never_reaches_the_store_and_records_do(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "t.db"))
    agent = Agent(model=ScriptedModel([SECRET]), agent_hooks=[deny_output], store=store,
                  session_id="s1")  # fmt: skip
    result = await agent.invoke_async("tell me")
    assert result.stop_reason == "blocked"
    entries = await store.read_entries("s1", 0)
    dumped = json.dumps([e.data for e in entries])
    assert SECRET not in dumped
    audit = [e.data["agent_hooks"] for e in entries if e.kind == "audit"]
    points = [r["interception_point"] for r in audit]
    assert points == [
        "agent_startup",
        "input",
        "pre_model_call",
        "post_model_call",
        "output",
        "agent_shutdown",
    ]
    assert audit[4]["verdict"]["decision"] == "deny"
    assert all("tell me" not in json.dumps(r) for r in audit)  # payload-free


async def test_a_post_model_call_deny_keeps_the_reply_out_of_the_store(tmp_path: Path) -> None:
    def deny_reply(ctx: dict[str, Any]) -> dict[str, Any]:
        if ctx["interception_point"] == "post_model_call":
            return {"decision": "deny", "reason": "p:bad-reply"}
        return {"decision": "allow"}

    store = SQLiteStore(str(tmp_path / "t.db"))
    agent = Agent(model=ScriptedModel([SECRET]), agent_hooks=[deny_reply], store=store,
                  session_id="s2")  # fmt: skip
    assert (await agent.invoke_async("x")).stop_reason == "blocked"
    entries = await store.read_entries("s2", 0)
    assert SECRET not in json.dumps([e.data for e in entries])
