"""The session's system prompt is journaled and sent byte-identical on resume."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel


@tool
def send(amount: int) -> str:
    """Send money."""
    return f"sent {amount}"


class Ask(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm("send?")


def _turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "done"
    return {"tool_calls": [{"name": "send", "args": {"amount": 5}}]}


def _agent(db: Path, prompt: str | None) -> Agent:
    return Agent(
        ScriptedModel(_turn, name="prompted", record_requests=True),
        tools=[send],
        interventions=[Ask()],
        system_prompt=prompt,
        store=SQLiteStore(str(db)),
        session_id="prompt-1",
    )


def _kinds(db: Path) -> list[tuple[str, Any]]:
    async def read() -> list[tuple[str, Any]]:
        store = SQLiteStore(str(db))
        try:
            record = await store.load("prompt-1")
            assert record is not None
            return [(e.kind, e.data) for e in record.entries if e.kind == "system_prompt"]
        finally:
            await store.close()

    return asyncio.run(read())


def _sent(agent: Agent) -> list[str | None]:
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return [r.system_prompt for r in model.requests]


def test_a_resumed_run_sends_the_journaled_prompt_whatever_the_new_agent_says(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.db"
    first = _agent(db, "You are the payments agent. v1")
    iid = first("pay").interrupts[0].id
    assert _kinds(db) == [("system_prompt", {"system_prompt": "You are the payments agent. v1"})]

    missing = _agent(db, None)  # another agent object, no prompt given: the session's is used
    waiting = missing.resume({})
    assert waiting.stop_reason == "interrupt"
    different = _agent(db, "something else entirely")
    assert different.resume({iid: "approve"}).text == "done"
    assert _sent(different) == ["You are the payments agent. v1"]  # byte-identical prefix
    assert len(_kinds(db)) == 1  # a resume never changes it


def test_a_missing_prompt_reuses_the_sessions_and_a_new_one_is_a_journaled_change(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p.db"

    def plain(prompt: str | None) -> Agent:
        return Agent(
            ScriptedModel(lambda m, s: "hi", name="plain", record_requests=True),
            system_prompt=prompt,
            store=SQLiteStore(str(db)),
            session_id="prompt-1",
        )

    plain("v1")("first")
    again = plain(None)
    again("second")
    assert _sent(again) == ["v1"]
    changed = plain("v2")
    changed("third")
    assert _sent(changed) == ["v2"]
    assert [d["system_prompt"] for _, d in _kinds(db)] == ["v1", "v2"]
    later = plain(None)
    later("fourth")
    assert _sent(later) == ["v2"]
