"""Edited arguments in the answer to a Confirm raised deep in an agent tree.

What a human approved is exactly what runs: the edit answered at the top reaches the
child that stopped and its tool runs with exactly those arguments, checked first
against that child's tool schema (strictly: a person's value is never coerced). A bad
edit is an AnswerError naming the tool and the argument, and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, AnswerError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import delegate

SUPPORT = Path(__file__).parents[1] / "support"
sys.path.insert(0, str(SUPPORT))

import agent_tree  # noqa: E402

EDIT = {"approved": True, "args": {"text": "EDITED"}}
DONE = {2: "planner done: wrote a + wrote b", 3: "planner done: researcher done: wrote a + wrote b"}


def _split(interrupts: list[Any]) -> tuple[Any, Any]:
    """The interrupts of coder k1 and coder k2."""
    one, two = sorted(interrupts, key=lambda i: i.name if hasattr(i, "name") else i["name"])
    return one, two


@pytest.mark.parametrize("depth", [2, 3])
def test_an_edit_answered_at_the_top_runs_exactly_in_the_child(tmp_path: Path, depth: int) -> None:
    effects = tmp_path / "effects.txt"
    top = agent_tree.build(None, effects, depth=depth)
    first = top("plan")
    one, two = _split(first.interrupts)
    assert one.point.endswith("coder#k1/before_tool_call")
    before = list(top.messages)

    bad = [
        ({"text": 42}, r"tool 'write': argument 'text': expected a string, got 42"),
        ({"text": "x", "mode": "w"}, r"tool 'write': unexpected argument 'mode'"),
        ({}, r"tool 'write': .*'text'"),
    ]
    for args, message in bad:
        with pytest.raises(AnswerError, match=message) as refused:
            top.resume({one.id: {"approved": True, "args": args}, two.id: "approve"})
        assert "still pending" in str(refused.value)
        assert one.name in str(refused.value)
    # nothing lost, nothing ran: both questions still wait, the history is as it was
    assert top.messages == before
    assert top.pending_interrupts == first.interrupts
    assert not effects.exists()

    done = top.resume({one.id: EDIT, two.id: "approve"})
    assert done.stop_reason == "end_turn", done.reason
    assert done.text == DONE[depth]
    assert sorted(effects.read_text().split()) == ["EDITED", "b"]  # exactly the edit ran


def test_an_edit_equal_to_the_models_arguments_is_not_checked_as_a_persons_edit(
    tmp_path: Path,
) -> None:
    effects = tmp_path / "effects.txt"
    top = agent_tree.build(None, effects)
    one, two = _split(top("plan").interrupts)
    same = {"approved": True, "args": dict(one.tool_call.arguments)}
    assert top.resume({one.id: same, two.id: "approve"}).stop_reason == "end_turn"
    assert sorted(effects.read_text().split()) == ["a", "b"]


def _step(db: str, effects: Path, depth: int, *args: str) -> dict[str, Any]:
    return agent_tree.step(db, effects, *args, depth=depth)


@pytest.mark.parametrize("depth", [2, 3])
def test_an_edit_routes_to_the_child_across_processes(db: str, tmp_path: Path, depth: int) -> None:
    effects = tmp_path / "effects.txt"
    first = _step(db, effects, depth, "start")
    assert first["stop_reason"] == "interrupt"
    one, two = (i["id"] for i in _split(first["interrupts"]))

    bad = {one: {"approved": True, "args": {"text": ["not", "a", "string"]}}, two: "approve"}
    refused = _step(db, effects, depth, "resume", json.dumps(bad))
    assert refused["error"] == "AnswerError"
    assert "tool 'write': argument 'text': expected a string" in refused["message"]
    assert not effects.exists()

    # another process: the edit for k1 only; k2's question stays pending, nothing lost
    second = _step(db, effects, depth, "resume", json.dumps({one: EDIT}))
    assert second["stop_reason"] == "interrupt"
    assert [i["id"] for i in second["interrupts"]] == [two]
    # targeted resume: the edited call ran (exactly the edit); k2 waits for its answer
    assert effects.read_text().split() == ["EDITED"]
    third = _step(db, effects, depth, "resume", json.dumps({two: "approve"}))
    assert third["stop_reason"] == "end_turn", third
    assert third["text"] == DONE[depth]
    assert sorted(effects.read_text().split()) == ["EDITED", "b"]


def test_the_inbox_checks_a_nested_edit_against_the_childs_tool(tmp_path: Path) -> None:
    db, effects = str(tmp_path / "tether.db"), tmp_path / "effects.txt"
    first = agent_tree.build(db, effects)("plan")
    assert first.stop_reason == "interrupt"

    async def decide() -> dict[str, Any]:
        store = SQLiteStore(db)
        pending = await store.approvals.pending(session_id="tree-1")
        [k1] = [a for a in pending if "coder#k1" in a.name]
        [k2] = [a for a in pending if "coder#k2" in a.name]
        checker = agent_tree.build(None, effects)  # the app factory's Agent: the top only
        with pytest.raises(AnswerError, match="tool 'write': argument 'text': expected a str"):
            await store.approvals.decide(
                k1.id, "approve", decided_by="alice", edited_args={"text": 7}, validate=checker
            )
        assert (await store.approvals.get(k1.id)).status == "pending"
        await store.approvals.decide(
            k1.id, "approve", decided_by="alice", edited_args={"text": "EDITED"}, validate=checker
        )
        await store.approvals.decide(k2.id, "approve", decided_by="bob")
        answers = await store.approvals.answers_for("tree-1")
        await store.close()
        return answers

    answers = asyncio.run(decide())
    done = agent_tree.build(db, effects).resume(answers)
    assert done.stop_reason == "end_turn", done.reason
    assert sorted(effects.read_text().split()) == ["EDITED", "b"]


def test_an_edit_reaches_a_delegated_helper() -> None:
    ran: list[str] = []

    @tool
    def write(text: str) -> str:
        """Write text."""
        ran.append(text)
        return f"ok {text}"

    class ConfirmWrites(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
            return Confirm("write?") if event.tool_call.name == "write" else None

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done: " + messages[-1].tool_results[0].content
        if messages[0].text == "go":
            return {"tool_calls": [{"id": "d1", "name": "delegate", "args": {"task": "w"}}]}
        return {"tool_calls": [{"id": "w1", "name": "write", "args": {"text": "model's"}}]}

    top = Agent(
        model=ScriptedModel(turn), tools=[write, delegate()], interventions=[ConfirmWrites()]
    )
    [pending] = top("go").interrupts
    assert pending.point == "delegate#d1/before_tool_call"
    with pytest.raises(AnswerError, match="tool 'write': argument 'text': expected a string"):
        top.resume({pending.id: {"approved": True, "args": {"text": 1}}})
    done = top.resume({pending.id: {"approved": True, "args": {"text": "human's"}}})
    assert done.text == "done: done: ok human's"
    assert ran == ["human's"]
