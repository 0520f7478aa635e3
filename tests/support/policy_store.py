"""A store of recorded traffic for ``tether policy check``: real agents (ScriptedModel, real
tools) run into a SQLiteStore, one session each, under a permissive policy.

Session ``s-NNNN`` makes two tool calls: ``read_file`` of ``path`` and, every seventh
session, ``delete_file`` (every 21st of ``/etc/...``, the calls a new rule should deny);
every fifth session also calls ``deploy`` with ``env`` ``prod``. The tools write nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.durable import SQLiteStore, Store
from tether.models import ScriptedModel


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
def delete_file(path: str) -> str:
    """Delete a file (here: says it did)."""
    return f"deleted {path}"


@tool
def deploy(env: str, token: str = "") -> str:
    """Deploy (here: says it did)."""
    return f"deployed to {env}"


TOOLS = [read_file, delete_file, deploy]


def session_calls(index: int) -> list[dict[str, Any]]:
    """The tool calls session ``index`` records (one batch)."""
    calls: list[dict[str, Any]] = [
        {"id": f"r{index}", "name": "read_file", "args": {"path": f"/srv/{index}.txt"}}
    ]
    if index % 7 == 0:
        target = f"/etc/{index}.conf" if index % 21 == 0 else f"/tmp/{index}.tmp"
        calls.append({"id": f"d{index}", "name": "delete_file", "args": {"path": target}})
    if index % 5 == 0:
        args = {"env": "prod", "token": f"sk-secret{index:06d}"}
        calls.append({"id": f"p{index}", "name": "deploy", "args": args})
    return calls


def session_id(index: int) -> str:
    return f"s-{index:04d}"


def recorder(store: Store, index: int, **agent_options: Any) -> Agent:
    """The agent that records session ``index``: one batch of calls, then a final answer."""
    script = [{"tool_calls": session_calls(index)}, "done"]
    return Agent(
        model=ScriptedModel(script),
        tools=TOOLS,
        store=store,
        session_id=session_id(index),
        **agent_options,
    )


def record(store: Store, index: int, **agent_options: Any) -> None:
    """Run session ``index`` for real (the sync facade)."""
    result = recorder(store, index, **agent_options)(f"task {index}")
    assert result.stop_reason == "end_turn", result


async def record_async(store: Store, index: int, **agent_options: Any) -> None:
    """Run session ``index`` for real, on the caller's event loop."""
    result = await recorder(store, index, **agent_options).invoke_async(f"task {index}")
    assert result.stop_reason == "end_turn", result


def build(path: Path, sessions: int) -> SQLiteStore:
    """``sessions`` recorded sessions in a new SQLite store at ``path`` (closed after)."""
    store = SQLiteStore(path)
    for index in range(sessions):
        record(store, index)
    asyncio.run(store.close())
    return store


def expected_calls(sessions: int) -> list[tuple[str, str, str]]:
    """(session, call id, tool) of every recorded call."""
    return [(session_id(i), c["id"], c["name"]) for i in range(sessions) for c in session_calls(i)]
