"""The frozen Runtime under the Agent: built once, read-only, rebuilt only through validation,
and inherited as a value (the child Agent is never changed)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tether import Agent, ConfigurationError, Limits, tool
from tether.control import BeforeModelCall, BeforeToolCall, Deny, InterventionHandler
from tether.models import ScriptedModel
from tether.runtime import Runtime


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def sub(a: int, b: int) -> int:
    """Subtract b from a."""
    return a - b


def _add_turns() -> ScriptedModel:
    return ScriptedModel([{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, "5"])


class NoSub(InterventionHandler):
    name = "no-sub"

    def before_tool_call(self, event: Any) -> Any:
        return Deny("no subtraction") if event.tool_call.name == "sub" else None


def test_the_runtime_is_frozen_and_holds_what_the_agent_runs_with() -> None:
    agent = Agent(model=_add_turns(), tools=[add], system_prompt="be brief", limits=Limits(turns=4))
    runtime = agent.runtime
    assert isinstance(runtime, Runtime)
    assert runtime.model is agent.model
    assert runtime.toolset.by_name == {"add": add}
    assert runtime.toolset.specs == [add.spec()]
    assert runtime.system_prompt == "be brief"
    assert runtime.limits == Limits(turns=4)
    assert runtime.path == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        runtime.limits = None  # type: ignore[misc]


def test_a_bad_value_set_on_an_agent_is_refused_and_nothing_changes() -> None:
    agent = Agent(model=_add_turns(), tools=[add])
    before = agent.runtime
    with pytest.raises(ConfigurationError, match=r"limits= takes a Limits\(...\) or None, got str"):
        agent.limits = "20 turns"  # type: ignore[assignment]
    with pytest.raises(ConfigurationError, match=r"budget= takes an IterationBudget"):
        agent.budget = 50  # type: ignore[assignment]
    with pytest.raises(ConfigurationError, match=r"confirm= takes a callable"):
        agent.confirm = "yes"  # type: ignore[assignment]
    with pytest.raises(ConfigurationError, match="two tools are named 'add'"):
        agent.tools = [add, add]
    assert agent.runtime is before  # never half-applied
    assert agent.run("q").text == "5"


def test_setting_a_rebuilt_attribute_validates_it_and_the_next_run_uses_it() -> None:
    agent = Agent(model=ScriptedModel(["one"]), tools=[add])
    before = agent.runtime
    agent.tools = [add, sub]
    agent.limits = Limits(turns=1)
    assert agent.runtime is not before
    assert before.toolset.by_name == {"add": add}  # the old value is untouched
    assert sorted(agent.tool_map) == ["add", "sub"]
    assert [s["name"] for s in agent.tool_specs] == ["add", "sub"]  # the views stay in step
    assert agent.runtime.limits == Limits(turns=1)
    agent.model = ScriptedModel([{"tool_calls": [{"name": "sub", "args": {"a": 1, "b": 1}}]}])
    assert agent.run("q").stop_reason == "limit_turns"


def test_configuration_that_shapes_hooks_or_policy_is_refused_with_the_way_out() -> None:
    agent = Agent(model=_add_turns(), tools=[add])
    for attr, value in [
        ("interventions", [NoSub()]),
        ("hooks", []),
        ("store", None),
        ("execution", None),
        ("session_id", "abc"),
    ]:
        with pytest.raises(ConfigurationError, match=rf"agent.{attr} is fixed .* agent.clone"):
            setattr(agent, attr, value)
    with pytest.raises(ConfigurationError, match=r"agent\.tool_map is read-only"):
        agent.tool_map = {}  # type: ignore[misc]


def test_clone_replaces_some_configuration_and_starts_a_fresh_conversation() -> None:
    seen: list[str] = []
    agent = Agent(model=_add_turns(), tools=[add], system_prompt="a", name="lead")

    @agent.on(BeforeToolCall)
    def note(event: BeforeToolCall) -> None:
        seen.append(event.tool_call.name)

    agent.run("first")
    twin = agent.clone(model=_add_turns(), system_prompt="b")
    assert twin is not agent
    assert twin.runtime is not agent.runtime
    assert twin.system_prompt == "b"
    assert agent.system_prompt == "a"
    assert twin.name == "lead"
    assert twin.tool_map == agent.tool_map
    assert twin.messages == []
    assert twin.session_id != agent.session_id
    twin.run("second")
    assert seen == ["add", "add"]  # the hook registered with on() came along
    with pytest.raises(ConfigurationError, match="clone\\(\\) takes Agent's constructor arguments"):
        agent.clone(modle=None)


def test_a_child_used_alone_after_a_parent_called_it_has_exactly_its_own_configuration() -> None:
    child = Agent(
        model=ScriptedModel(
            [{"tool_calls": [{"name": "sub", "args": {"a": 3, "b": 1}}]}, "child done"] * 2
        ),
        tools=[sub],
    )
    own = child.runtime
    conversation = child.conversation
    parent = Agent(
        model=ScriptedModel(
            [{"tool_calls": [{"name": "helper", "args": {"task": "t"}}]}, "parent done"]
        ),
        tools=[child.as_tool("helper")],
        interventions=[NoSub()],
        limits=Limits(turns=7),
    )
    result = parent.run("go")
    assert result.text == "parent done"
    # the parent's policy applied inside the call: the child's sub was denied
    child_session = parent.messages[2].tool_results[0].content
    assert "child done" in child_session
    # ... and the child Agent object is exactly as it was built
    assert child.runtime is own
    assert child.conversation is conversation
    assert child.messages == []
    assert child.interventions == ()
    assert child.limits is not None
    assert child.limits.turns != 7
    assert child.path == ""
    assert child.store is None
    alone = child.run("alone")
    assert alone.text == "child done"
    assert [r.content for m in child.messages for r in m.tool_results] == ["2"]  # not denied


def test_under_is_a_pure_function_of_the_two_runtimes() -> None:
    parent = Agent(model=_add_turns(), tools=[add], interventions=[NoSub()], limits=Limits(turns=5))
    child = Agent(model=_add_turns(), tools=[sub])
    under = child.runtime.under(parent.runtime, "helper#c1", "c1")
    assert under.path == "helper#c1"
    assert under.limits == Limits(turns=5)
    assert [type(h).__name__ for h in under.interventions] == ["NoSub"]
    assert child.runtime.interventions == ()
    assert child.runtime.path == ""
    assert under.hooks is not child.runtime.hooks
    assert not child.runtime.hooks.has(BeforeToolCall)  # the runner went to the copy only
    assert under.hooks.has(BeforeToolCall)
    grandchild = Agent(model=_add_turns()).runtime.under(under, "coder#k1", "k1")
    assert grandchild.path == "helper#c1/coder#k1"
    assert grandchild.hidden is parent.runtime.hidden  # one set of hidden strings per tree


def test_a_hook_added_to_a_child_after_a_parent_called_it_runs_in_the_next_call() -> None:
    child = Agent(model=ScriptedModel(lambda m, s: "child done"))
    parent = Agent(
        model=ScriptedModel(
            lambda m, s: (
                "done"
                if m[-1].role == "tool"
                else {"tool_calls": [{"name": "helper", "args": {"task": "t"}}]}
            )
        ),
        tools=[child.as_tool("helper")],
    )
    parent.run("one")
    seen: list[str] = []

    @child.on(BeforeModelCall)
    def note(event: BeforeModelCall) -> None:
        seen.append(event.agent.path)

    parent.reset()
    parent.run("two")
    assert len(seen) == 1
    assert seen[0].startswith("helper#")
