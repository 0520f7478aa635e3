"""ctx.interrupt(..., state=...): a resumed tool reads what it saved when it interrupted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, InputError, SessionStateError, ToolContext, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools.context import INTERRUPT_STATE_KEY, CancelSignal

SEEN: list[tuple[bool, Any]] = []


@tool
def copy_files(count: int, ctx: ToolContext) -> str:
    """Copy files, asking before the second half."""
    SEEN.append((ctx.interrupted, ctx.interrupt_state))
    done = ctx.interrupt_state["done"] if ctx.interrupted else 0
    if not ctx.interrupted:
        done = count // 2  # the first half is copied; save where we are
    answer = ctx.interrupt("continue?", f"{done} of {count} copied", state={"done": done})
    return f"copied {count} ({done} before the pause, then {answer})"


def turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return messages[-1].tool_results[0].content
    return {"tool_calls": [{"name": "copy_files", "args": {"count": 10}}]}


def test_a_resumed_tool_in_another_process_reads_its_saved_state(tmp_path: Path) -> None:
    SEEN.clear()
    db = str(tmp_path / "t.db")
    first = Agent(
        model=ScriptedModel(turn), tools=[copy_files], store=SQLiteStore(db), session_id="c"
    )
    [asked] = first("copy").interrupts
    assert asked.reason == "5 of 10 copied"
    second = Agent(
        model=ScriptedModel(turn), tools=[copy_files], store=SQLiteStore(db), session_id="c"
    )
    assert second.resume({asked.id: "yes"}).text == "copied 10 (5 before the pause, then yes)"
    assert SEEN == [(False, None), (True, {"done": 5})]
    assert INTERRUPT_STATE_KEY not in second.state  # dropped once answered


def test_state_that_is_not_json_is_refused_naming_the_interrupt() -> None:
    @tool
    def bad(ctx: ToolContext) -> str:
        """Interrupt with a set as state."""
        try:
            ctx.interrupt("ask", state={"x": {1, 2}})
        except InputError as exc:
            return f"refused: {exc}"
        return "saved"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "bad", "args": {}}]}, "ok"]), tools=[bad]
    )
    agent("go")
    text = agent.messages[2].tool_results[0].content
    assert "refused: ctx.interrupt('ask', state=...) must be JSON" in text
    assert INTERRUPT_STATE_KEY not in agent.state


def test_interrupted_is_false_outside_a_resume() -> None:
    @tool
    def plain(ctx: ToolContext) -> str:
        """Report."""
        return f"{ctx.interrupted} {ctx.interrupt_state}"

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "plain", "args": {}}]}, "ok"]), tools=[plain]
    )
    agent("go")
    assert agent.messages[2].tool_results[0].content == "False None"
    outside = ToolContext(agent.messages[1].tool_calls[0], agent, {}, CancelSignal())
    with pytest.raises(SessionStateError, match="only available while the agent runs"):
        outside.interrupt("x", state={"a": 1})
