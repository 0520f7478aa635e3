"""resume.py: answers are checked before anything changes; only interrupted calls re-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, AnswerError, SessionStateError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

RAN: list[dict[str, Any]] = []


@tool
def transfer(to: str, amount: int) -> str:
    """Send money."""
    RAN.append({"to": to, "amount": amount})
    return f"sent {amount} to {to}"


class Ask(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm(f"send {event.tool_call.arguments['amount']}?")


def turn(messages: list[Any], specs: list[Any]) -> Any:
    """Call transfer once; answer "done" once its result is in (any agent object)."""
    if messages[-1].role == "tool":
        return "done"
    return {"tool_calls": [{"name": "transfer", "args": {"to": "bob", "amount": 5}}]}


def make(**options: Any) -> Agent:
    RAN.clear()
    return Agent(model=ScriptedModel(turn), tools=[transfer], interventions=[Ask()], **options)


def test_resume_of_a_session_that_is_not_suspended_says_so() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    with pytest.raises(SessionStateError, match="is not suspended: there is nothing to resume"):
        agent.resume({})


def test_unknown_ids_list_what_is_pending() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    with pytest.raises(AnswerError) as info:
        agent.resume({"typo": "approve"})
    assert "unknown interrupt id(s) ['typo']" in str(info.value)
    assert iid in str(info.value)


def test_edited_arguments_run_exactly_as_approved() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    result = agent.resume({iid: {"approved": True, "args": {"to": "bob", "amount": 7}}})
    assert result.text == "done"
    assert RAN == [{"to": "bob", "amount": 7}]


def test_a_denied_call_does_not_run() -> None:
    agent = make()
    iid = agent("pay").interrupts[0].id
    assert agent.resume({iid: "deny"}).text == "done"
    assert RAN == []
    assert agent.messages[2].tool_results[0].is_error


def test_resume_in_another_agent_object_continues_from_the_journal(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    first = make(store=SQLiteStore(db), session_id="pay-1")
    iid = first("pay").interrupts[0].id
    second = make(store=SQLiteStore(db), session_id="pay-1")
    assert second.resume({iid: "approve"}).text == "done"
    assert RAN == [{"to": "bob", "amount": 5}]
    with pytest.raises(SessionStateError):
        second.resume({iid: "approve"})
