"""Swarm: handoffs carry the conversation; an approval after a handoff resumes on the
agent that asked (its tools, its conversation), in another process too; bounded."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError
from tether.durable import Store
from tether.models import ScriptedModel
from tether.workflows import Swarm

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

import swarm_agents
from swarm_agents import support_swarm
from workflow_agents import Backend


def handing(to: str, message: str = "over to you") -> ScriptedModel:
    def turn(messages: list[Any], specs: list[Any]) -> Any:
        return {
            "tool_calls": [
                {"id": "h", "name": "handoff", "args": {"agent": to, "message": message}}
            ]
        }

    return ScriptedModel(turn)


def test_a_handoff_runs_the_named_agent_on_the_conversation_so_far() -> None:
    seen: list[str] = []

    def answer(messages: list[Any], specs: list[Any]) -> str:
        seen.append(messages[0].text)
        return "b answered"

    a = Agent(handing("b", "they need b"), name="a")
    b = Agent(ScriptedModel(answer), name="b")
    swarm = Swarm([a, b], entry="a")
    result = swarm.run("hello there")
    assert result.stop_reason == "end_turn"
    assert result.text == "b answered"
    assert seen == ["user: hello there\n\na hands off: they need b"]
    assert set(result.usage.by_agent) == {"a#1", "b#2"}


def test_a_handoff_to_an_unknown_agent_is_a_tool_error_listing_the_valid_names() -> None:
    errors: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            errors.append(messages[-1].tool_results[0].content)
            return "fine, I answer myself"
        return {
            "tool_calls": [{"id": "h", "name": "handoff", "args": {"agent": "zed", "message": "x"}}]
        }

    a = Agent(ScriptedModel(turn), name="a")
    swarm = Swarm(
        [
            a,
            Agent(ScriptedModel(lambda m, s: "b"), name="b"),
            Agent(ScriptedModel(lambda m, s: "c"), name="c"),
        ],
        entry="a",
    )
    result = swarm.run("go")
    assert result.text == "fine, I answer myself"
    assert errors == ["Error: ToolArgumentError: no agent named 'zed' to hand off to; agents: b, c"]


def test_handoffs_are_bounded_by_max_handoffs_as_a_stop_reason() -> None:
    ping = Agent(handing("pong"), name="ping")
    pong = Agent(handing("ping"), name="pong")
    result = Swarm([ping, pong], entry="ping", max_handoffs=3).run("go")
    assert result.stop_reason == "limit_turns"
    assert result.reason == "swarm 'swarm' reached max_handoffs=3 (pong -> ping was not run)"
    assert set(result.usage.by_agent) == {"ping#1", "pong#2", "ping#3", "pong#4"}
    none = Swarm([ping, pong], entry="ping", max_handoffs=0).run("go")
    assert none.stop_reason == "limit_turns"
    assert none.reason == "swarm 'swarm' reached max_handoffs=0 (ping -> pong was not run)"


def test_bad_swarms_are_configuration_errors() -> None:
    a = Agent(ScriptedModel(lambda m, s: "a"), name="a")
    with pytest.raises(ConfigurationError, match=r"Swarm\(entry='b'\) names no agent; agents: a"):
        Swarm([a], entry="b")
    with pytest.raises(ConfigurationError, match="Swarm has two agents named 'a'"):
        Swarm([a, a], entry="a")
    with pytest.raises(ConfigurationError, match="Swarm agent name None is not valid"):
        Swarm([Agent(ScriptedModel(lambda m, s: "x"))], entry="a")
    with pytest.raises(ConfigurationError, match=r"max_handoffs=\.\.\.\) takes an int >= 0"):
        Swarm([a], entry="a", max_handoffs=-1)


async def test_an_approval_asked_after_a_handoff_resumes_on_that_agent(
    stores: Callable[[], Store], tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = await support_swarm(stores(), effects).invoke_async("I want my money back")
    assert first.stop_reason == "interrupt"
    [pending] = first.interrupts
    assert pending.name == "billing#2/confirm:ConfirmRefunds"
    assert pending.reason == "refund 30?"
    done = await support_swarm(stores(), effects).resume_async({pending.id: "approve"})
    assert done.stop_reason == "end_turn"
    # billing's tools (refund + handoff), billing's conversation, billing's answer
    assert done.text == "billing: refunded 30 (2 tools)"
    assert effects.read_text() == "refund 30\n"


def test_after_a_handoff_the_approval_resumes_on_the_new_agent_in_another_process(
    db: str, tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    first = swarm_agents.step(db, effects, "start")
    assert first["stop_reason"] == "interrupt"
    [pending] = first["interrupts"]
    assert pending["point"] == "billing#2/before_tool_call"
    done = swarm_agents.step(db, effects, "resume", json.dumps({pending["id"]: "approve"}))
    assert done["stop_reason"] == "end_turn"
    assert done["text"] == "billing: refunded 30 (2 tools)"
    assert effects.read_text() == "refund 30\n"


def test_history_filters_what_the_next_agent_is_handed() -> None:
    seen: list[str] = []

    def answer(messages: list[Any], specs: list[Any]) -> str:
        seen.append(messages[0].text)
        return "done"

    a = Agent(handing("b", "only this"), name="a")
    b = Agent(ScriptedModel(answer), name="b")
    swarm = Swarm([a, b], entry="a", history=lambda messages: "")
    assert swarm.run("a secret the next agent must not see").text == "done"
    assert seen == ["a hands off: only this"]


async def test_max_handoffs_counts_the_handoffs_made_before_a_resume_in_another_process(
    backend: Backend,
) -> None:
    first = await backend.build("bounded_swarm").invoke_async("I want my money back")
    assert first.stop_reason == "interrupt"
    [pending] = first.interrupts
    assert pending.name == "billing#2/confirm:ConfirmRefunds"
    done = await backend.resume("bounded_swarm", {pending.id: "approve"})
    # triage -> billing was made in the first process: billing -> triage is one too many
    assert done["stop_reason"] == "limit_turns", done
    assert (
        done["reason"] == "swarm 'bounded' reached max_handoffs=1 (billing -> triage was not run)"
    )
    assert backend.effects.read_text() == "refund 30\n"  # the approved refund, once
    assert done["by_agent"] == ["billing#2"]
