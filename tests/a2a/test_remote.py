"""RemoteAgent against an A2A agent built only from a2a-sdk's classes (tests/support)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a_sdk_server import serve
from remote_agents import caller

from tether import Agent
from tether.a2a import RemoteAgent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import Tool


def stats(base: str) -> dict[str, int]:
    with urllib.request.urlopen(f"{base}/stats", timeout=10) as response:
        out: dict[str, int] = json.loads(response.read())
        return out


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    with serve() as base:
        yield base


def test_the_card_names_and_describes_the_tool(remote: str) -> None:
    agent = RemoteAgent(remote)
    assert isinstance(agent, Tool)
    assert agent.name == "painter"
    assert agent.description.startswith("Paints things in a color you choose.")
    assert "- paint: Paint a thing." in agent.description
    assert agent.spec()["input_schema"]["required"] == ["task"]
    given = RemoteAgent(remote, name="artist", description="Paints.")
    assert (given.name, given.description) == ("artist", "Paints.")


def test_input_required_is_an_interrupt_whose_answer_reaches_the_remote(remote: str) -> None:
    before = stats(remote)
    agent = caller(remote, "paint the fence")
    first = agent("paint the fence, ask me the color")
    assert first.stop_reason == "interrupt"
    [asked] = first.interrupts
    assert asked.point == "painter#c1/color"
    assert asked.name == "painter#c1/color"
    assert isinstance(asked.reason, dict)
    assert asked.reason["reason"] == "Which color?"
    assert asked.reason["remote_agent"] == "painter"
    done = agent.resume({asked.id: "red"})
    assert done.stop_reason == "end_turn"
    assert done.text == "caller got (ok): done: paint the fence in red"
    with urllib.request.urlopen(f"{remote}/answers", timeout=10) as response:
        assert json.loads(response.read())[-1] == {"color": "red"}  # remote id -> answer
    after = stats(remote)
    assert after["new_tasks"] - before["new_tasks"] == 1
    assert after["continued"] - before["continued"] == 1
    assert agent.conversation.state == {}  # the call's note is gone with its result


@pytest.mark.parametrize(
    ("task", "state", "said"),
    [
        ("fail the fence", "failed", "the paint ran out"),
        ("reject the fence", "rejected", "I do not paint that"),
        ("cancel the fence", "canceled", "the painter left"),
        ("login the fence", "auth-required", "sign in first"),
    ],
)
def test_a_remote_task_that_does_not_complete_is_a_tool_error_naming_its_state(
    remote: str, task: str, state: str, said: str
) -> None:
    result = caller(remote, task)("go")
    assert result.stop_reason == "end_turn"
    assert result.text.startswith("caller got (error): Error: RemoteAgentError: ")
    assert "the remote agent 'painter' ended task " in result.text
    assert result.text.endswith(f" {state}: {said}")


def test_the_callers_policy_applies_a_denied_call_never_reaches_the_remote(remote: str) -> None:
    from tether.control import BeforeToolCall, Deny, InterventionHandler

    class NoPainting(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("no painting today") if event.tool_call.name == "painter" else None

    before = stats(remote)
    result = caller(remote, "paint the shed", interventions=[NoPainting()])("go")
    assert result.text.startswith("caller got (denied):")
    assert stats(remote) == before


def test_a_durable_caller_lists_the_remote_question_in_its_inbox(
    remote: str, tmp_path: Path
) -> None:
    import asyncio

    db = str(tmp_path / "caller.db")
    first = caller(remote, "paint the gate", store=SQLiteStore(db), session_id="job-1")("go")
    [asked] = first.interrupts
    pending = asyncio.run(SQLiteStore(db).approvals.pending(session_id="job-1"))
    assert [(a.interrupt_id, a.source) for a in pending] == [(asked.id, "tool")]
    again = caller(remote, "paint the gate", store=SQLiteStore(db), session_id="job-1")
    done = again.resume({asked.id: "blue"})
    assert done.text == "caller got (ok): done: paint the gate in blue"
    assert asyncio.run(SQLiteStore(db).approvals.pending(session_id="job-1")) == []


def test_an_unreachable_remote_is_a_tool_error_and_nothing_is_in_doubt(remote: str) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tool = RemoteAgent(f"http://127.0.0.1:{port}", name="painter", description="Paints.")
    agent = Agent(model=ScriptedModel(_script()), tools=[tool])
    result = agent("go")
    assert result.stop_reason == "end_turn"
    assert "could not fetch the agent card" in result.text
    assert agent.conversation.state == {}


def _script() -> object:
    from remote_agents import script

    return script("paint it")


def test_a_remote_lost_mid_call_puts_the_call_in_doubt_and_the_answer_settles_it() -> None:
    import threading
    import time

    results: list[object] = []
    with serve() as base:
        agent = caller(base, "hold the ladder")
        worker = threading.Thread(target=lambda: results.append(agent("go")))
        worker.start()
        deadline = time.monotonic() + 30
        while stats(base)["messages"] == 0 or "task" not in _note(agent):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    # the remote went away while it held the task: nobody can say whether it ran
    worker.join(timeout=60)
    [first] = results
    assert first.stop_reason == "interrupt"  # type: ignore[attr-defined]
    [doubt] = first.interrupts  # type: ignore[attr-defined]
    assert (doubt.source, doubt.point, doubt.tool_call.id) == ("in_doubt", "in_doubt", "c1")
    done = agent.resume({doubt.id: {"skip": "held by hand"}})
    assert done.stop_reason == "end_turn"
    assert done.text == "caller got (ok): held by hand"


def _note(agent: Agent) -> dict[str, object]:
    notes = agent.conversation.state.get("__tether_remote_calls__") or {}
    return dict(next(iter(notes.values()), {}))


def test_cancelling_the_caller_cancels_the_remote_task() -> None:
    import threading
    import time

    results: list[object] = []
    with serve() as base:
        agent = caller(base, "hold the brush")
        worker = threading.Thread(target=lambda: results.append(agent("go")))
        worker.start()
        deadline = time.monotonic() + 30
        while "task" not in _note(agent):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        agent.cancel()
        worker.join(timeout=60)
        assert stats(base)["canceled"] == 1
    [result] = results
    assert result.stop_reason == "cancelled"  # type: ignore[attr-defined]
    assert agent.conversation.state == {}


def test_a_remote_question_asked_inside_a_sub_agent_reaches_the_top_with_its_path(
    remote: str,
) -> None:
    child = caller(remote, "paint the bench")

    def top(messages: list[object], specs: list[dict[str, object]]) -> object:
        last = messages[-1]
        if getattr(last, "role", None) == "tool":
            return "top got: " + last.tool_results[0].content  # type: ignore[attr-defined]
        return {"tool_calls": [{"name": "helper", "args": {"task": "paint"}, "id": "h1"}]}

    parent = Agent(model=ScriptedModel(top), tools=[child.as_tool("helper", "Helps.")])
    first = parent("go")
    [asked] = first.interrupts
    assert asked.point == "helper#h1/painter#c1/color"
    done = parent.resume({asked.id: "teal"})
    assert done.text == "top got: caller got (ok): done: paint the bench in teal"


def test_a_remote_without_streaming_is_called_with_plain_send_message() -> None:
    with serve(streaming=False) as base:
        agent = caller(base, "paint the pot")
        first = agent("go")
        [asked] = first.interrupts
        assert asked.point == "painter#c1/color"
        done = agent.resume({asked.id: "ochre"})
        assert done.text == "caller got (ok): done: paint the pot in ochre"
        assert stats(base)["new_tasks"] == 1


def test_a_call_past_its_timeout_is_a_tool_error_and_the_remote_task_is_cancelled() -> None:
    from remote_agents import script

    with serve() as base:
        tool = RemoteAgent(base, timeout=1.0)
        agent = Agent(model=ScriptedModel(script("hold the line")), tools=[tool])
        result = agent("go")
        assert stats(base)["canceled"] == 1
    assert result.text.startswith("caller got (error): Error: RemoteAgentError: ")
    assert "the remote agent 'painter' did not finish within 1 s (asked it to cancel task " in (
        result.text
    )
    assert agent.conversation.state == {}


def test_the_remote_question_answered_in_the_inbox_reaches_the_remote(
    remote: str, tmp_path: Path
) -> None:
    import asyncio

    db = str(tmp_path / "caller.db")
    first = caller(remote, "paint the wall", store=SQLiteStore(db), session_id="job-2")("go")
    [asked] = first.interrupts

    async def decide() -> dict[str, object]:
        store = SQLiteStore(db)
        try:
            [row] = await store.approvals.pending(session_id="job-2")
            await store.approvals.decide(row.id, "respond", decided_by="alice", response="navy")
            return await store.approvals.answers_for("job-2")
        finally:
            await store.close()

    answers = asyncio.run(decide())
    assert answers == {asked.id: "navy"}
    again = caller(remote, "paint the wall", store=SQLiteStore(db), session_id="job-2")
    done = again.resume(answers)
    assert done.text == "caller got (ok): done: paint the wall in navy"
