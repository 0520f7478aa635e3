"""Agent.name: the name an agent goes by in traces, AGENT-HOOKS contexts and the journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether import Agent, ConfigurationError
from tether.models import ScriptedModel


def test_an_agent_is_unnamed_until_named_and_the_name_is_checked() -> None:
    agent = Agent(model=ScriptedModel(["x"]))
    assert agent.name is None
    agent.name = "researcher-1"
    assert agent.name == "researcher-1"
    assert repr(agent).startswith("Agent(name='researcher-1', model='scripted'")
    for bad in ("", " lead", "a\x1b[31mb", "right\u202eleft", "x" * 65, 42):
        with pytest.raises(ConfigurationError, match="an agent's name is 1 to 64"):
            agent.name = bad  # type: ignore[assignment]
        assert agent.name == "researcher-1"  # unchanged
    agent.name = None
    assert agent.name is None
    assert Agent(model=ScriptedModel(["x"]), name="lead").name == "lead"
    with pytest.raises(ConfigurationError, match="an agent's name"):
        Agent(model=ScriptedModel(["x"]), name="bad\x1bname")


def test_the_name_is_the_agent_hooks_agent_id() -> None:
    pytest.importorskip("agent_hooks")
    seen: list[Any] = []

    def spy(context: dict[str, Any]) -> dict[str, Any]:
        seen.append(context["agent"]["id"])
        return {"decision": "allow"}

    agent = Agent(model=ScriptedModel(["hi"]), agent_hooks=[spy])
    agent.name = "lead"
    agent("go")
    assert set(seen) == {"lead"}


async def test_each_run_journals_the_name_and_the_timeline_shows_it(tmp_path: Path) -> None:
    from tether.durable import SQLiteStore
    from tether.ops.timeline import read_timeline, timeline_of

    db = tmp_path / "named.db"
    agent = Agent(model=ScriptedModel(["hi"]), store=SQLiteStore(db), session_id="named-1")
    agent.name = "researcher"
    await agent.invoke_async("go")
    await agent.store.close()  # type: ignore[union-attr]
    store = SQLiteStore(db)
    try:
        data = await read_timeline(store, "named-1")
    finally:
        await store.close()
    assert data is not None
    [run] = [s for s in timeline_of(data)["steps"] if s["kind"] == "run"]
    assert run["detail"]["agent"] == "researcher"
    assert run["title"].endswith("(agent researcher)")
