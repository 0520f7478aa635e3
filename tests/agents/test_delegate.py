"""The opt-in delegate tool: a child with a subset of the parent's tools, bounded."""

from __future__ import annotations

from typing import Any

import pytest

from tether import Agent, ConfigurationError, Limits, tool
from tether.control import BeforeToolCall, Deny, InterventionHandler
from tether.models import ScriptedModel
from tether.tools import delegate

RAN: list[str] = []
CHILD_TOOLS: list[list[str]] = []


@tool
def lookup(q: str) -> str:
    """Look something up."""
    RAN.append(f"lookup {q}")
    return f"found {q}"


@tool
def rm(path: str) -> str:
    """Remove a file."""
    RAN.append(f"rm {path}")
    return "removed"


def script(*calls: dict[str, Any], child_call: dict[str, Any] | None = None) -> Any:
    """Parent: make ``calls`` then answer with the results; a child (first message is a
    task, not "go"): make ``child_call`` once, then answer."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[0].text != "go":  # a child
            CHILD_TOOLS.append(sorted(s["name"] for s in specs))
            if messages[-1].role == "tool":
                return "child: " + messages[-1].tool_results[0].content
            return {"tool_calls": [child_call]} if child_call else "child: nothing to do"
        if messages[-1].role == "tool":
            return " | ".join(r.content for r in messages[-1].tool_results)
        return {"tool_calls": list(calls)}

    return turn


def setup() -> None:
    RAN.clear()
    CHILD_TOOLS.clear()


def test_the_child_gets_only_the_tools_named_and_answers() -> None:
    setup()
    call = {"id": "d1", "name": "delegate", "args": {"task": "find x", "tools": ["lookup"]}}
    model = ScriptedModel(script(call, child_call={"name": "lookup", "args": {"q": "x"}}))
    parent = Agent(model=model, tools=[lookup, rm, delegate()])
    result = parent("go")
    assert result.text == "child: found x"
    assert CHILD_TOOLS[0] == ["lookup"]
    assert RAN == ["lookup x"]
    assert result.usage.by_agent["delegate#d1"].model_calls == 2


def test_a_model_cannot_escape_a_deny_by_delegating_the_call() -> None:
    setup()

    class DenyRm(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("no deletions") if event.tool_call.name == "rm" else None

    call = {"id": "d1", "name": "delegate", "args": {"task": "delete /etc", "tools": ["rm"]}}
    model = ScriptedModel(script(call, child_call={"name": "rm", "args": {"path": "/etc"}}))
    parent = Agent(model=model, tools=[rm, delegate()], interventions=[DenyRm()])
    result = parent("go")
    assert RAN == []
    assert "no deletions" in result.text


def test_depth_is_bounded_the_child_gets_no_delegate_past_the_limit() -> None:
    setup()
    call = {"id": "d1", "name": "delegate", "args": {"task": "t", "tools": ["delegate"]}}
    parent = Agent(model=ScriptedModel(script(call)), tools=[lookup, delegate(max_depth=1)])
    result = parent("go")
    assert "unknown or unavailable tool(s) ['delegate']" in result.text
    assert "the helper may use: lookup" in result.text
    setup()
    call = {"id": "d1", "name": "delegate", "args": {"task": "t"}}
    Agent(model=ScriptedModel(script(call)), tools=[lookup, delegate(max_depth=1)])("go")
    assert CHILD_TOOLS[0] == ["lookup"]  # all tools, minus delegate at the last level
    setup()
    Agent(model=ScriptedModel(script(call)), tools=[lookup, delegate(max_depth=2)])("go")
    assert CHILD_TOOLS[0] == ["delegate", "lookup"]


def test_count_per_invocation_is_bounded() -> None:
    setup()
    calls = [
        {"id": f"d{i}", "name": "delegate", "args": {"task": f"t{i}", "tools": ["lookup"]}}
        for i in range(3)
    ]
    parent = Agent(model=ScriptedModel(script(*calls)), tools=[lookup, delegate(max_children=2)])
    result = parent("go")
    parts = result.text.split(" | ")
    assert parts[:2] == ["child: nothing to do", "child: nothing to do"]
    assert "already started 2 helper(s), the limit" in parts[2]


def test_bad_bounds_are_refused_naming_the_argument() -> None:
    with pytest.raises(ConfigurationError, match=r"delegate\(max_depth=...\) must be an int >= 1"):
        delegate(max_depth=0)
    with pytest.raises(ConfigurationError, match=r"max_children=...\) must be an int >= 1"):
        delegate(max_children=True)
    with pytest.raises(ConfigurationError, match=r"delegate\(max_turns=...\) must be an int >= 1"):
        delegate(max_turns=0)


def test_a_helper_has_its_own_cap_of_model_calls_under_the_parents_other_limits() -> None:
    setup()
    call = {"id": "d1", "name": "delegate", "args": {"task": "dig", "tools": ["lookup"]}}
    seen: list[str] = []

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[0].text == "go":
            if messages[-1].role == "tool":
                seen.append(messages[-1].tool_results[0].content)
                return "done"
            return {"tool_calls": [call]}
        return {"tool_calls": [{"name": "lookup", "args": {"q": "more"}}]}  # never stops

    tool = delegate(max_turns=4)
    assert tool.max_turns == 4
    assert delegate().max_turns == 50
    parent = Agent(
        model=ScriptedModel(turn), tools=[lookup, tool], limits=Limits(turns=60, tool_calls=500)
    )
    result = parent("go")
    assert result.text == "done"
    assert result.usage.by_agent["delegate#d1"].model_calls == 4  # not the parent's 60
    assert len(RAN) == 4
    assert "limit of 4 model call(s)" in seen[0]


def test_a_helper_never_runs_past_the_parents_tool_call_limit() -> None:
    setup()
    call = {"id": "d1", "name": "delegate", "args": {"task": "dig", "tools": ["lookup"]}}

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[0].text == "go":
            return "done" if messages[-1].role == "tool" else {"tool_calls": [call]}
        return {"tool_calls": [{"name": "lookup", "args": {"q": "more"}}]}

    parent = Agent(
        model=ScriptedModel(turn), tools=[lookup, delegate()], limits=Limits(tool_calls=3)
    )
    result = parent("go")
    assert len(RAN) == 3  # the parent's tool_calls limit bounds the helper's own run
    assert result.stop_reason == "limit_tool_calls"  # and the parent, counting the tree
