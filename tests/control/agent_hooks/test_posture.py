"""The tool-seam posture: what a host error at pre/post_tool_call does to the run."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, ConfigurationError, tool
from tether.control.agent_hooks import AgentHooksHost
from tether.models import ScriptedModel

RAN: list[str] = []


@tool
def act(what: str) -> str:
    """Do something."""
    RAN.append(what)
    return f"did {what}"


def script(messages: list[Any], specs: Any) -> Any:
    if messages[-1].role == "tool":
        return "done"
    return {"tool_calls": [{"name": "act", "args": {"what": "a"}}]}


def failing_at(point: str) -> Any:
    def intercept(ctx: dict[str, Any]) -> Any:
        if ctx["interception_point"] == point:
            raise RuntimeError("policy engine down")
        return {"decision": "allow"}

    return intercept


def run(point: str, **host_options: Any) -> tuple[Agent, Any]:
    RAN.clear()
    host = AgentHooksHost([failing_at(point)], **host_options)
    agent = Agent(model=ScriptedModel(script), tools=[act], agent_hooks=host)
    return agent, agent("go")


def test_a_host_error_before_a_tool_stops_the_run_by_default() -> None:
    agent, result = run("pre_tool_call")
    assert result.stop_reason == "blocked"
    assert "host_error:interceptor_failed" in (result.reason or "")
    assert RAN == []
    assert [m.role for m in agent.messages] == ["user", "assistant", "tool"]  # history valid
    assert agent.messages[2].tool_results[0].status == "denied"


def test_a_host_error_after_a_tool_stops_the_run_and_withholds_the_result() -> None:
    agent, result = run("post_tool_call")
    assert result.stop_reason == "blocked"
    assert RAN == ["a"]  # it ran; its result never reaches the model
    [shown] = agent.messages[2].tool_results
    assert shown.status == "denied"
    assert "did a" not in shown.content


def test_the_continue_posture_gives_the_model_a_denied_result_and_goes_on() -> None:
    agent, result = run("pre_tool_call", tool_seam_host_error="continue")
    assert result.stop_reason == "end_turn"
    assert result.text == "done"
    assert RAN == []
    assert "host_error:interceptor_failed" in agent.messages[2].tool_results[0].content


def test_a_policy_deny_at_the_tool_seam_still_lets_the_model_go_on() -> None:
    RAN.clear()

    def deny_tools(ctx: dict[str, Any]) -> Any:
        if ctx["interception_point"] == "pre_tool_call":
            return {"decision": "deny", "reason": "policy:no-acting"}
        return {"decision": "allow"}

    agent = Agent(model=ScriptedModel(script), tools=[act], agent_hooks=[deny_tools])
    result = agent("go")
    assert result.stop_reason == "end_turn"  # only host errors terminate
    assert RAN == []


def test_an_unknown_posture_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="'terminate' or 'continue', got 'stop'"):
        AgentHooksHost([], tool_seam_host_error="stop")


def _declaration(posture: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "declaration": "agent-hooks-declaration/1.0",
        "bindings": [
            {
                "id": "flaky",
                "kind": "tether.python",
                "config": {"object": f"{__name__}:FailingTools"},
            }
        ],
    }
    if posture is not None:
        doc["configuration"] = {"posture": {"tool_seam_host_error": posture}}
    return doc


class FailingTools:
    def intercept(self, ctx: dict[str, Any]) -> Any:
        return failing_at("pre_tool_call")(ctx)


@pytest.mark.parametrize(
    ("posture", "stop_reason"),
    [("terminate", "blocked"), ("continue", "end_turn"), (None, "end_turn")],
)
def test_a_declared_host_follows_the_posture_its_declaration_states(
    posture: str | None, stop_reason: str
) -> None:
    RAN.clear()
    agent = Agent.from_declaration(_declaration(posture), model=ScriptedModel(script), tools=[act])
    assert agent.agent_hooks is not None
    assert agent.agent_hooks.tool_seam_host_error == (posture or "continue")
    assert agent("go").stop_reason == stop_reason
    assert RAN == []
