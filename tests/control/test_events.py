"""Hook events: the writable-field whitelist of every event type."""

import dataclasses
from typing import Any

import pytest

from tether import Agent, Message, ToolCall, ToolResult, tool
from tether.control import (
    AfterInvocation,
    AfterMessageAdded,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
    HookEvent,
    PolicyVerdict,
)
from tether.control.events import HOOK_EVENT_TYPES, hook_event
from tether.messages import Usage
from tether.models import ModelResponse, ScriptedModel
from tether.result import Result, RunUsage


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def sub(a: int, b: int) -> int:
    """Subtract."""
    return a - b


@pytest.fixture
def agent() -> Agent:
    return Agent(model=ScriptedModel(["ok"]), tools=[add, sub])


def _response(text: str = "hello") -> ModelResponse:
    return ModelResponse(Message.assistant(text), "end_turn", Usage(1, 1))


def make_events(agent: Agent) -> dict[type[HookEvent], HookEvent]:
    call = ToolCall("c1", "add", {"a": 1, "b": 2})
    result = ToolResult("c1", "add", "3")
    return {
        AgentInitialized: AgentInitialized(agent),
        BeforeInvocation: BeforeInvocation(agent, [Message.user("hi")]),
        AfterInvocation: AfterInvocation(
            agent, Result("end_turn", None, RunUsage(), agent.session_id)
        ),
        AfterMessageAdded: AfterMessageAdded(agent, Message.user("hi")),
        BeforeModelCall: BeforeModelCall(agent, [Message.user("hi")], agent.tool_specs, 1),
        AfterModelCall: AfterModelCall(agent, _response(), None, 1),
        BeforeToolCall: BeforeToolCall(agent, call, add),
        AfterToolCall: AfterToolCall(agent, call, add, result),
        BeforeOutput: BeforeOutput(agent, Message.assistant("final")),
        PolicyVerdict: PolicyVerdict(
            agent, "before_tool_call", "Ask", "Confirm", BeforeToolCall(agent, call, add)
        ),
    }


EXPECTED_WRITABLE: dict[type[HookEvent], set[str]] = {
    AgentInitialized: set(),
    BeforeInvocation: {"messages", "block"},
    AfterInvocation: {"resume"},
    AfterMessageAdded: set(),
    BeforeModelCall: {"messages", "tool_choice", "block"},
    AfterModelCall: {"response", "retry", "guidance", "block"},
    BeforeToolCall: {"tool_call", "selected_tool", "cancel_tool", "block"},
    AfterToolCall: {"result", "retry", "block"},
    BeforeOutput: {"message", "block"},
    PolicyVerdict: set(),
}

# A fresh value of the right kind for every writable field.
NEW_VALUES: dict[str, Any] = {
    "messages": [Message.user("replaced")],
    "block": "stop here",
    "response": _response("replaced"),
    "retry": True,
    "guidance": "try again",
    "tool_choice": "required",
    "tool_call": ToolCall("c9", "sub", {"a": 5, "b": 1}),
    "selected_tool": sub,
    "cancel_tool": "not allowed",
    "result": ToolResult("c1", "add", "replaced"),
    "message": Message.assistant("replaced"),
    "resume": "another prompt",
}

ALL_FIELDS = [
    (event_type, f.name)
    for event_type in EXPECTED_WRITABLE
    for f in dataclasses.fields(event_type)  # type: ignore[arg-type]
]
READ_ONLY = [(t, name) for t, name in ALL_FIELDS if name not in EXPECTED_WRITABLE[t]]
WRITABLE = [(t, name) for t, name in ALL_FIELDS if name in EXPECTED_WRITABLE[t]]


def test_every_event_type_is_covered() -> None:
    assert set(HOOK_EVENT_TYPES) == set(EXPECTED_WRITABLE)


@pytest.mark.parametrize("event_type", list(EXPECTED_WRITABLE), ids=lambda t: t.__name__)
def test_writable_whitelist_is_exactly_the_documented_one(event_type: type[HookEvent]) -> None:
    assert set(event_type.WRITABLE) == EXPECTED_WRITABLE[event_type]


def test_every_writable_field_has_a_test_value() -> None:
    assert {name for _, name in WRITABLE} <= set(NEW_VALUES)


@pytest.mark.parametrize(
    ("event_type", "field"), WRITABLE, ids=[f"{t.__name__}.{n}" for t, n in WRITABLE]
)
def test_writing_an_allowed_field_works(
    agent: Agent, event_type: type[HookEvent], field: str
) -> None:
    event = make_events(agent)[event_type]
    value = NEW_VALUES[field]
    setattr(event, field, value)
    assert getattr(event, field) is value


@pytest.mark.parametrize(
    ("event_type", "field"), READ_ONLY, ids=[f"{t.__name__}.{n}" for t, n in READ_ONLY]
)
def test_writing_a_read_only_field_raises(
    agent: Agent, event_type: type[HookEvent], field: str
) -> None:
    event = make_events(agent)[event_type]
    before = getattr(event, field)
    with pytest.raises(AttributeError) as info:
        setattr(event, field, "x")
    message = str(info.value)
    assert f"{event_type.__name__}.{field}" in message
    assert "read-only" in message
    assert getattr(event, field) is before


@pytest.mark.parametrize("event_type", list(EXPECTED_WRITABLE), ids=lambda t: t.__name__)
def test_writing_an_unknown_attribute_raises(agent: Agent, event_type: type[HookEvent]) -> None:
    event = make_events(agent)[event_type]
    with pytest.raises(AttributeError, match=rf"{event_type.__name__}\.surprise is read-only"):
        event.surprise = 1  # type: ignore[attr-defined]
    assert not hasattr(event, "surprise")


@pytest.mark.parametrize("event_type", list(EXPECTED_WRITABLE), ids=lambda t: t.__name__)
def test_the_error_lists_the_writable_fields(agent: Agent, event_type: type[HookEvent]) -> None:
    event = make_events(agent)[event_type]
    with pytest.raises(AttributeError) as info:
        event.agent = agent  # type: ignore[attr-defined]
    message = str(info.value)
    expected = ", ".join(sorted(EXPECTED_WRITABLE[event_type])) or "none"
    assert message.endswith(f"(writable fields of {event_type.__name__}: {expected})")


@pytest.mark.parametrize(
    ("event_type", "field"), ALL_FIELDS, ids=[f"{t.__name__}.{n}" for t, n in ALL_FIELDS]
)
def test_deleting_any_field_raises(agent: Agent, event_type: type[HookEvent], field: str) -> None:
    event = make_events(agent)[event_type]
    before = getattr(event, field)
    with pytest.raises(
        AttributeError, match=rf"^{event_type.__name__}\.{field} cannot be deleted$"
    ):
        delattr(event, field)
    assert getattr(event, field) is before


def test_constructor_sets_read_only_fields_and_defaults(agent: Agent) -> None:
    call = ToolCall("c1", "add", {"a": 1})
    event = BeforeToolCall(agent, call, add)
    assert event.agent is agent
    assert event.tool_call is call
    assert event.selected_tool is add
    assert event.cancel_tool is False
    after = AfterModelCall(agent, None, ValueError("x"), 2)
    assert (after.retry, after.guidance, after.block, after.attempt) == (False, None, None, 2)


def test_events_have_no_instance_dict(agent: Agent) -> None:
    # slots: an attribute cannot sneak in through __dict__ either
    for event in make_events(agent).values():
        assert not hasattr(event, "__dict__")


def test_after_events_are_marked_reverse() -> None:
    reverse = {t for t in HOOK_EVENT_TYPES if t.REVERSE}
    assert reverse == {AfterModelCall, AfterToolCall, AfterInvocation}


def test_hook_event_accepts_a_valid_whitelist() -> None:
    @hook_event
    class Custom(HookEvent):
        WRITABLE = frozenset({"value"})
        value: int
        label: str = "x"

    event = Custom(1)
    event.value = 2
    assert event.value == 2
    with pytest.raises(AttributeError, match=r"Custom\.label is read-only"):
        event.label = "y"


def test_hook_event_rejects_a_whitelist_naming_an_unknown_field() -> None:
    with pytest.raises(TypeError) as info:

        @hook_event
        class Broken(HookEvent):
            WRITABLE = frozenset({"value", "nope", "also_missing"})
            value: int

    assert str(info.value) == "Broken.WRITABLE names unknown fields: ['also_missing', 'nope']"


def test_an_after_event_runs_in_reverse_exactly_when_it_closes_a_before_event() -> None:
    names = {t.__name__ for t in HOOK_EVENT_TYPES}
    for event_type in HOOK_EVENT_TYPES:
        closes = event_type.__name__.startswith("After") and (
            "Before" + event_type.__name__.removeprefix("After") in names
        )
        assert event_type.REVERSE is closes, event_type.__name__


def test_design_names_the_reversed_events_and_the_one_after_event_that_is_not() -> None:
    """design.md §4 once said every After* event runs in reverse; AfterMessageAdded does not."""
    from pathlib import Path

    design = Path(__file__).resolve().parents[2] / "docs" / "design.md"
    section = design.read_text().split("## 4. Control plane")[1].split("\n## ")[0]
    text = " ".join(section.split())
    assert "After* events run in reverse" not in text
    reversed_ = sorted(t.__name__ for t in HOOK_EVENT_TYPES if t.REVERSE)
    assert f"({', '.join(reversed_)}) runs in reverse" in text
    assert "AfterMessageAdded closes nothing" in text
    assert "runs in registration order" in text
