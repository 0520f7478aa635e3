"""Toolset: an agent's tools, name map and specs in step; a changing source's tools are
taken up at the next model call."""

from __future__ import annotations

import logging

import pytest

from tether import Agent, ConfigurationError, Tool, tool
from tether.control import BeforeModelCall
from tether.models import ScriptedModel
from tether.tools.toolset import Toolset


@tool
def local(x: int) -> int:
    """A local tool."""
    return x


def make(name: str) -> Tool:
    def fn(x: int) -> str:
        return f"{name}:{x}"

    fn.__name__ = name
    fn.__doc__ = f"The {name} tool."
    return tool(fn)


class Changing:
    """A source whose offer changes when the test says so."""

    def __init__(self, *names: str) -> None:
        self.offer = [make(n) for n in names]
        self.generation = 0

    def tools(self) -> list[Tool]:
        return list(self.offer)

    def offered(self) -> list[Tool]:
        return list(self.offer)

    def change(self, *names: str) -> None:
        self.offer = [make(n) for n in names]
        self.generation += 1

    def close(self) -> None:
        pass


class Fixed:
    def tools(self) -> list[Tool]:
        return [make("fixed")]

    def close(self) -> None:
        pass


def test_the_next_model_call_sends_the_new_tools_and_keeps_the_order(caplog):
    source = Changing("a", "b")
    seen: list[list[str]] = []

    def script(messages, specs):
        seen.append([s["name"] for s in specs])
        if len(seen) == 1:
            source.change("b", "c", "local")  # "local" collides: left out with a warning
            return {"tool_calls": [{"name": "a", "args": {"x": 1}}]}
        if len(seen) == 2:
            return {"tool_calls": [{"name": "a", "args": {"x": 2}}]}
        return "done"

    agent = Agent(ScriptedModel(script), tools=[local, source, Fixed()], store=None)
    with caplog.at_level(logging.WARNING, logger="tether.tools"):
        assert agent("go").stop_reason == "end_turn"
    assert seen[0] == ["local", "a", "b", "fixed"]
    assert seen[1] == ["local", "b", "c", "fixed"]
    assert [t.name for t in agent.tools] == seen[1]
    first, second = [r for m in agent.messages for r in m.tool_results]
    assert first.content == "a:1"  # ran before the change reached the agent
    assert second.is_error
    assert second.content == "Error: Unknown tool 'a'. Available tools: b, c, fixed, local."
    assert "now offers a tool named 'local', which the tools list already provides" in caplog.text


def test_an_agent_without_a_changing_source_registers_no_hook():
    assert not Agent(ScriptedModel(["ok"]), tools=[local, Fixed()], store=None).hooks.has(
        BeforeModelCall
    )
    assert Agent(ScriptedModel(["ok"]), tools=[Changing("a")], store=None).hooks.has(
        BeforeModelCall
    )


def test_a_refresh_makes_the_context_estimate_count_the_new_tools() -> None:
    source = Changing("a")
    agent = Agent(model=ScriptedModel(["one", "two"]), tools=[source], store=None)
    from tether.context.estimate import Estimator

    agent("first")
    before = Estimator().fixed_tokens_for(agent.tool_specs, agent.system_prompt)
    source.change("a", "b" * 60)
    agent("second")  # the refresh happens at this run's model call
    after = Estimator().fixed_tokens_for(agent.tool_specs, agent.system_prompt)
    assert after > before


def test_the_three_views_change_together_in_one_place() -> None:
    source = Changing("a", "b")
    toolset = Toolset([local, source])
    tools, by_name = toolset.tools, toolset.by_name
    assert [t.name for t in tools] == ["local", "a", "b"] == list(by_name)
    source.change("c")
    agent = Agent(ScriptedModel(["ok"]), tools=[local, source], store=None)
    agent("go")  # the run's model call takes the change up
    toolset = agent.runtime.toolset
    assert [t.name for t in toolset.tools] == ["local", "c"]
    assert list(toolset.by_name) == ["local", "c"]
    assert [s["name"] for s in toolset.specs] == ["local", "c"]
    assert agent.tools is toolset.tools
    assert agent.tool_specs is toolset.specs


def test_replacing_the_tools_of_an_agent_with_a_changing_source_is_refused() -> None:
    agent = Agent(ScriptedModel(["ok"]), tools=[Changing("a")], store=None)
    before = agent.runtime
    with pytest.raises(ConfigurationError, match=r"source that changes .* agent.clone\(tools="):
        agent.tools = [local]
    assert agent.runtime is before
    twin = agent.clone(tools=[local])
    assert [t.name for t in twin.tools] == ["local"]
