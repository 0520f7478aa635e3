"""AfterInvocation.resume: a hook starts another invocation at once (bounded)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, RetryLimitError
from tether.control import AfterInvocation
from tether.durable import SQLiteStore
from tether.events import FinalResult
from tether.models import ScriptedModel


def test_a_hook_resume_prompt_runs_another_invocation_in_the_same_call(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    agent = Agent(model=ScriptedModel(["draft", "final"]), store=SQLiteStore(db), session_id="s")

    @agent.on(AfterInvocation)
    def review(event: AfterInvocation) -> None:
        if event.result.text == "draft":
            event.resume = "now make it final"

    result = agent("write it")
    assert result.text == "final"
    assert [m.text for m in agent.messages] == ["write it", "draft", "now make it final", "final"]
    again = Agent(model=ScriptedModel(["x"]), store=SQLiteStore(db), session_id="s")
    again("more")
    assert "now make it final" in [m.text for m in again.messages]  # journaled


def test_stream_yields_a_final_result_per_invocation() -> None:
    agent = Agent(model=ScriptedModel(["one", "two"]))
    agent.on(AfterInvocation)(
        lambda e: setattr(e, "resume", "again") if e.result.text == "one" else None
    )

    async def collect() -> list[Any]:
        return [e async for e in agent.stream("go")]

    finals = [e.result.text for e in asyncio.run(collect()) if isinstance(e, FinalResult)]
    assert finals == ["one", "two"]


def test_endless_resumes_stop_at_the_bound_with_a_clear_error() -> None:
    agent = Agent(model=ScriptedModel(lambda m, s: "again"))
    agent.on(AfterInvocation)(lambda e: setattr(e, "resume", "once more"))
    with pytest.raises(RetryLimitError, match=r"asked to resume session .* 6 times in a row"):
        agent("go")
    assert len([m for m in agent.messages if m.role == "assistant"]) == 6  # nothing lost


def test_other_fields_stay_read_only() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    agent.on(AfterInvocation)(lambda e: setattr(e, "result", None))
    with pytest.raises(Exception, match=r"AfterInvocation\.result is read-only"):
        agent("go")
