"""agent.steer(text): guidance reaches a running invocation at the next boundary."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, InputError, ToolContext, tool
from tether.durable import SQLiteStore
from tether.events import FinalResult, Steered
from tether.models import ScriptedModel

SEEN: list[list[str]] = []


def turn(messages: list[Any], specs: list[Any]) -> Any:
    SEEN.append([m.text for m in messages if m.role == "user"])
    if messages[-1].role == "tool" or messages[-1].text == "prefer the blue one":
        return "done"
    return {"tool_calls": [{"name": "work", "args": {}}]}


@tool
def work(context: ToolContext) -> str:
    """Work for a while; the user steers meanwhile (from this tool's thread)."""
    context.agent.steer("prefer the blue one")
    return "worked"


def test_guidance_given_while_a_tool_runs_joins_before_the_next_model_call(
    tmp_path: Path,
) -> None:
    SEEN.clear()
    db = str(tmp_path / "t.db")
    agent = Agent(model=ScriptedModel(turn), tools=[work], store=SQLiteStore(db), session_id="s")

    async def collect() -> list[Any]:
        return [event async for event in agent.stream("paint")]

    events = asyncio.run(collect())
    steered = [e for e in events if isinstance(e, Steered)]
    assert [e.text for e in steered] == ["prefer the blue one"]
    assert isinstance(events[-1], FinalResult)
    assert SEEN[-1] == ["paint", "prefer the blue one"]  # seen by the second model call
    roles = [m.role for m in agent.messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    # journaled like any message: a fresh agent on the same session sees it
    again = Agent(model=ScriptedModel(["x"]), store=SQLiteStore(db), session_id="s")
    asyncio.run(again.invoke_async("more"))
    assert "prefer the blue one" in [m.text for m in again.messages]


def test_steer_is_thread_safe_and_keeps_order() -> None:
    agent = Agent(model=ScriptedModel(["ok"]))
    threads = [
        threading.Thread(target=lambda n=n: [agent.steer(f"{n}-{i}") for i in range(50)])
        for n in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    agent("go")
    texts = [m.text for m in agent.messages if m.role == "user"][1:]
    assert len(texts) == 200
    for n in range(4):
        assert [t for t in texts if t.startswith(f"{n}-")] == [f"{n}-{i}" for i in range(50)]


def test_empty_guidance_is_refused_and_nothing_is_queued() -> None:
    agent = Agent(model=ScriptedModel(["ok"]))
    with pytest.raises(InputError, match=r"agent.steer\(\) takes a non-empty str"):
        agent.steer("  ")
    assert agent("go").text == "ok"
    assert [m.role for m in agent.messages] == ["user", "assistant"]
