"""A child under its parent's AGENT-HOOKS host and audit trail, without mixing the two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_hooks import InterceptionRecord

from tether import Agent, tool
from tether.control.agent_hooks import AgentHooksHost
from tether.durable import SQLiteStore
from tether.models import ScriptedModel

RAN: list[str] = []


@tool
def read_secret() -> str:
    """Read the secret."""
    RAN.append("read_secret")
    return "s3cr3t"


@tool
def read_weather() -> str:
    """Read the weather."""
    RAN.append("read_weather")
    return "sunny"


def no_secrets(ctx: dict[str, Any]) -> dict[str, Any]:
    call = ctx.get("tool_call") or {}
    if ctx["interception_point"] == "pre_tool_call" and call.get("name") == "read_secret":
        return {"decision": "deny", "reason": "policy:no-secrets"}
    return {"decision": "allow"}


def child_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "child: " + " / ".join(r.content for r in messages[-1].tool_results)
    return {
        "tool_calls": [{"name": "read_secret", "args": {}}, {"name": "read_weather", "args": {}}]
    }


def parent_turn(messages: list[Any], specs: list[Any]) -> Any:
    tools = [m for m in messages if m.role == "tool"]
    if len(tools) == 1:  # after the child answered, the parent uses a tool of its own
        return {"tool_calls": [{"name": "read_weather", "args": {}}]}
    if tools:
        return "parent done"
    return {"tool_calls": [{"id": "d1", "name": "helper", "args": {"task": "look"}}]}


def _family(store: SQLiteStore | None, records: list[InterceptionRecord]) -> Agent:
    child = Agent(model=ScriptedModel(child_turn), tools=[read_secret, read_weather], store=None)
    host = AgentHooksHost([no_secrets], record_sink=records.append)
    options: dict[str, Any] = {} if store is None else {"store": store, "session_id": "top"}
    return Agent(
        model=ScriptedModel(parent_turn),
        tools=[child.as_tool("helper", "Helps"), read_weather],
        agent_hooks=host,
        **options,
    )


def test_the_parents_interceptors_govern_the_child_and_both_runs_finish() -> None:
    RAN.clear()
    records: list[InterceptionRecord] = []
    parent = _family(None, records)
    result = parent("go")
    assert result.stop_reason == "end_turn"
    assert result.text == "parent done"
    assert RAN == ["read_weather", "read_weather"]  # the child's secret read was denied
    child_reply = parent.messages[2].tool_results[0].content
    assert "policy:no-secrets" in child_reply
    denied = [r for r in records if r.verdict.reason == "policy:no-secrets"]
    assert len(denied) == 1
    points = [r.interception_point.value for r in records]
    assert points.count("agent_startup") == 2  # one AGENT-HOOKS session each, never mixed
    assert points.count("agent_shutdown") == 2
    assert points[-1] == "agent_shutdown"


def test_each_session_journals_its_own_records_and_the_child_is_audited(tmp_path: Path) -> None:
    RAN.clear()
    db = str(tmp_path / "t.db")
    records: list[InterceptionRecord] = []
    parent = _family(SQLiteStore(db), records)
    assert parent("go").text == "parent done"
    store = SQLiteStore(db)
    import asyncio

    async def read() -> tuple[list[Any], list[Any], list[Any]]:
        sessions = [s.session_id for s in await store.list_sessions(limit=10)]
        child_id = next(s for s in sessions if s != "top")
        top = await store.read_entries("top", 0)
        child = await store.read_entries(child_id, 0)
        audit = await store.audit.records(session_id=child_id)
        return top, child, audit

    top, child, audit = asyncio.run(read())

    def journaled(entries: list[Any]) -> list[str]:
        return [
            e.data["agent_hooks"]["interception_point"]
            for e in entries
            if e.kind == "audit" and "agent_hooks" in e.data
        ]

    assert journaled(child).count("pre_tool_call") == 2  # the child's own two calls
    assert journaled(top).count("pre_tool_call") == 2  # the parent's helper and weather calls
    executed = [r for r in audit if r.event == "tool.executed"]
    assert sorted(r.data["tool"] for r in executed) == ["read_secret", "read_weather"]
    assert asyncio.run(store.approvals.find(limit=10)) == []
