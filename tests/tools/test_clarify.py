"""The clarify tool: a question to the user, durable like any interrupt."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether import Agent
from tether.agents import as_tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.tools import clarify


def turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "painting it " + messages[-1].tool_results[0].content
    return {"tool_calls": [{"name": "clarify", "args": {"question": "Which colour?"}}]}


def test_the_answer_to_the_question_is_the_tool_result_in_another_process(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "t.db")
    first = Agent(
        model=ScriptedModel(turn), tools=[clarify()], store=SQLiteStore(db), session_id="q"
    )
    result = first("paint the fence")
    assert result.stop_reason == "interrupt"
    [asked] = result.interrupts
    assert (asked.name, asked.reason, asked.source) == ("clarify", "Which colour?", "tool")

    async def inbox() -> list[Any]:
        return await SQLiteStore(db).approvals.pending(session_id="q")

    [row] = asyncio.run(inbox())
    assert (row.name, row.reason) == ("clarify", "Which colour?")
    second = Agent(
        model=ScriptedModel(turn), tools=[clarify()], store=SQLiteStore(db), session_id="q"
    )
    assert second.resume({asked.id: "blue"}).text == "painting it blue"


def test_a_childs_question_reaches_the_top_with_its_path() -> None:
    child = Agent(model=ScriptedModel(turn), tools=[clarify()])

    def top_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "top: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "t1", "name": "painter", "args": {"task": "paint"}}]}

    top = Agent(model=ScriptedModel(top_turn), tools=[as_tool(child, name="painter")])
    [asked] = top("go").interrupts
    assert asked.name == "painter#t1/clarify"
    assert asked.reason == "Which colour?"
    assert top.resume({asked.id: "green"}).text == "top: painting it green"
