"""Bad input: misbehaving interceptors, bad transforms and refused declarations all fail closed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from agent_hooks import DeclarationError, InterceptionRecord

from tether import Agent, tool
from tether.control.agent_hooks import AgentHooksHost
from tether.errors import ConfigurationError
from tether.models import ScriptedModel

RAN: list[str] = []


@tool
def act(x: int) -> str:
    """Do it."""
    RAN.append(str(x))
    return "done"


TURNS = [{"tool_calls": [{"id": "c1", "name": "act", "args": {"x": 1}}]}, "finished"]


def only_at(point: str, bad: Any) -> Any:
    def intercept(ctx: dict[str, Any]) -> Any:
        if ctx["interception_point"] == point:
            return bad(ctx) if callable(bad) else bad
        return {"decision": "allow"}

    return intercept


def run(interceptor: Any, **options: Any) -> tuple[Any, list[InterceptionRecord]]:
    RAN.clear()
    records: list[InterceptionRecord] = []
    host = AgentHooksHost([interceptor], record_sink=records.append, **options)
    agent = Agent(model=ScriptedModel(list(TURNS)), tools=[act], agent_hooks=host)
    return agent("go"), records


def _raise(ctx: dict[str, Any]) -> Any:
    raise RuntimeError("policy engine down")


def _sleep(ctx: dict[str, Any]) -> Any:
    time.sleep(0.2)
    return {"decision": "allow"}


async def _async_sleep(ctx: dict[str, Any]) -> Any:
    await asyncio.sleep(5)
    return {"decision": "allow"}


class AsyncSleeper:
    async def intercept(self, ctx: dict[str, Any]) -> Any:
        if ctx["interception_point"] == "pre_tool_call":
            await asyncio.sleep(5)
        return {"decision": "allow"}


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (None, "host_error:verdict_invalid"),
        (42, "host_error:verdict_invalid"),
        ({"decision": "maybe"}, "host_error:verdict_invalid"),
        (_raise, "host_error:interceptor_failed"),
        (_sleep, "host_error:interceptor_timeout"),
        (
            {"decision": "transform", "transform": {"path": "$agent.id", "value": "x"}},
            "host_error:transform",
        ),
        (
            {"decision": "transform", "transform": {"path": "$target", "value": "not-an-object"}},
            "cannot be applied",
        ),
    ],
    ids=[
        "none",
        "wrong-type",
        "bad-decision",
        "raises",
        "sync-sleep",
        "outside-target",
        "unwritable",
    ],
)
def test_a_misbehaving_interceptor_denies_the_tool_call(bad: Any, reason: str) -> None:
    result, records = run(only_at("pre_tool_call", bad), timeout=0.05)
    assert RAN == []  # the tool never ran
    assert result.stop_reason == "blocked"  # tool seam posture "terminate", the default
    assert reason in (result.reason or "")
    tool_record = next(r for r in records if r.interception_point.value == "pre_tool_call")
    if reason != "cannot be applied":
        assert (tool_record.verdict.reason or "").startswith(reason)
    going_on, _ = run(only_at("pre_tool_call", bad), timeout=0.05, tool_seam_host_error="continue")
    assert RAN == []
    assert going_on.stop_reason == "end_turn"  # posture "continue": the model is told


def test_an_async_interceptor_past_the_timeout_denies() -> None:
    started = time.perf_counter()
    _result, records = run(AsyncSleeper(), timeout=0.05)
    assert time.perf_counter() - started < 2
    assert RAN == []
    assert any(r.verdict.reason == "host_error:interceptor_timeout" for r in records)


def test_a_misbehaving_interceptor_at_output_blocks_the_answer() -> None:
    result, _ = run(only_at("output", _raise))
    assert result.stop_reason == "blocked"
    assert "interceptor_failed" in (result.reason or "")
    assert result.text != "finished"


def test_an_unwritable_output_transform_fails_closed() -> None:
    bad = {"decision": "transform", "transform": {"path": "$target.content", "value": 7}}
    result, _ = run(only_at("output", bad))
    assert result.stop_reason == "blocked"
    assert "cannot be applied" in (result.reason or "")


def test_bad_configuration_is_refused_at_construction() -> None:
    with pytest.raises(ConfigurationError, match=r"AgentHooksHost\(mode=...\)"):
        Agent(model=ScriptedModel(["x"]), agent_hooks=AgentHooksHost([], mode="audit"))
    with pytest.raises(ConfigurationError, match="intercept"):
        Agent(model=ScriptedModel(["x"]), agent_hooks=[42])


def test_a_second_host_through_add_provider_is_refused_like_the_other_paths() -> None:
    judged: list[str] = []

    def second(ctx: dict[str, Any]) -> Any:
        judged.append(ctx["interception_point"])
        return {"decision": "allow"}

    first = AgentHooksHost([lambda ctx: {"decision": "allow"}])
    agent = Agent(model=ScriptedModel(["x"]), agent_hooks=first)
    other = AgentHooksHost([second])
    with pytest.raises(ConfigurationError) as refused:
        agent.hooks.add_provider(other)
    with pytest.raises(ConfigurationError) as two_agents:
        Agent(model=ScriptedModel(["x"]), agent_hooks=first)
    # the same rule in the same words as one host on two agents
    assert str(refused.value).split("; ", 1)[1] == str(two_agents.value).split("; ", 1)[1]
    assert "already attached to this agent" in str(refused.value)
    assert agent("go").text == "x"
    assert judged == []  # the refused host judges nothing
    assert agent.agent_hooks is first


DOC: dict[str, Any] = {
    "declaration": "agent-hooks-declaration/1.0",
    "bindings": [
        {
            "id": "allow",
            "kind": "tether.python",
            "config": {"object": "tether.control.agent_hooks:AllowAll"},
        }
    ],
}


def test_a_declaration_builds_a_working_agent() -> None:
    agent = Agent.from_declaration(DOC, model=ScriptedModel(["hi"]))
    assert agent("x").text == "hi"


@pytest.mark.parametrize(
    "doc",
    [
        {**DOC, "surprise": True},
        {**DOC, "declaration": "agent-hooks-declaration/9.0"},
        {k: v for k, v in DOC.items() if k != "declaration"},
        {**DOC, "bindings": [{"id": "x", "kind": "nobody.knows"}]},
    ],
    ids=["unknown-member", "unsupported-version", "no-version", "unknown-kind"],
)
def test_a_refused_declaration_raises_before_any_run(doc: dict[str, Any]) -> None:
    model = ScriptedModel(["never"])
    with pytest.raises(DeclarationError):
        Agent.from_declaration(doc, model=model)
    assert model.calls == 0
