"""``tether serve --app``: the factory's agents are built once per session and closed on
shutdown, so views and edited decisions never leak an agent (nor its MCP server processes).

The factory's agent has a real MCP server (the reference ``mcp-server-time``, a stdio
process): a leaked agent leaves that process running.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from live_server import call, live_server, seed
from ops_agents import AskFirst

from tether import Agent, tool
from tether.durable import MemoryStore, SQLiteStore
from tether.mcp import MCPServer
from tether.models import ScriptedModel
from tether.ops.server import create_app
from tether.ops.server.agents import SessionAgents

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")
VIEWS = 6


def time_servers(besides: frozenset[int] = frozenset()) -> list[int]:
    """Pids of this process's ``mcp-server-time`` children still running (other than
    ``besides``: ones another test of this process may have left)."""
    me = str(os.getpid())
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        alive = fields[1] == me and fields[0] != "Z"
        if alive and b"mcp-server-time" in cmdline and int(pid) not in besides:
            found.append(int(pid))
    return found


def wait_for_no_time_servers(besides: frozenset[int], timeout: float = 10) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := time_servers(besides)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


class CountingFactory:
    """``--app``'s factory: the transfer tool (for validating edits) plus an MCP server."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, session_id: str) -> Agent:
        self.calls.append(session_id)

        @tool
        def transfer(to: str, amount: int, api_token: str) -> str:
            """Send money."""
            return f"sent {amount} to {to}"

        return Agent(
            model=ScriptedModel(["unused"]),
            tools=[transfer, MCPServer.stdio(TIME_SERVER, [])],
            interventions=[AskFirst()],
            store=MemoryStore(),
            session_id=session_id,
        )


async def test_views_and_an_edit_call_the_factory_once_per_session_and_shutdown_closes_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "agents.db"
    store = SQLiteStore(db)
    tokens, approval_id = await seed(store)
    factory = CountingFactory()
    before = frozenset(time_servers())
    took: list[float] = []
    with live_server(create_app(SQLiteStore(db), app_factory=factory, close_store=True)) as url:

        def views() -> list[int]:
            statuses = []
            for i in range(VIEWS):
                path = "/api/sessions/pay-1" if i % 2 else "/api/timeline/pay-1"
                started = time.perf_counter()
                statuses.append(call("GET", url + path, tokens["alice"])[0])
                took.append(time.perf_counter() - started)
            return statuses

        assert await asyncio.to_thread(views) == [200] * VIEWS
        body: dict[str, Any] = {"decision": "approve", "edited_args": {"amount": 5}}
        route = f"{url}/api/approvals/{approval_id}/decision"
        status, decided = await asyncio.to_thread(call, "POST", route, tokens["alice"], body)
        assert (status, decided["decision"]) == (200, "approve_edited")
        assert await asyncio.to_thread(views) == [200] * VIEWS
        assert factory.calls == ["pay-1"], "one agent for every view and the edit"
        assert len(time_servers(before)) <= 1
    left = wait_for_no_time_servers(before)
    assert left == [], "the server's shutdown closes the agent it built"
    # after the first view, no view pays for building an agent (or starting a process)
    assert max(took[1:]) < 1.0, took
    await store.close()


async def test_concurrent_requests_share_one_build_and_the_oldest_agent_is_closed() -> None:
    factory = CountingFactory()
    before = frozenset(time_servers())
    agents = SessionAgents(factory, size=2)
    try:
        first = await asyncio.gather(*(agents.get("s-1") for _ in range(5)))
        assert factory.calls == ["s-1"]
        assert all(a is first[0] for a in first)
        await agents.get("s-2")
        assert await agents.get("s-1") is first[0]  # s-1 is now the most recently used
        await agents.get("s-3")  # drops s-2, the least recently used
        assert factory.calls == ["s-1", "s-2", "s-3"]
        assert await agents.get("s-1") is first[0]
        await agents.get("s-2")  # built again
        assert factory.calls == ["s-1", "s-2", "s-3", "s-2"]
        assert len(time_servers(before)) <= 2
    finally:
        await agents.close()
    assert wait_for_no_time_servers(before) == []
    assert agents.built == 4


async def test_a_failing_factory_is_a_503_and_is_called_again_next_time(tmp_path: Path) -> None:
    db = tmp_path / "broken.db"
    store = SQLiteStore(db)
    tokens, _ = await seed(store)
    calls: list[str] = []

    def broken(session_id: str) -> Agent:
        calls.append(session_id)
        raise RuntimeError("no such tool module")

    with live_server(create_app(SQLiteStore(db), app_factory=broken, close_store=True)) as url:
        for _ in range(2):
            status, body = await asyncio.to_thread(
                call, "GET", f"{url}/api/sessions/pay-1", tokens["alice"]
            )
            assert status == 503
            assert "no such tool module" in body["error"]
    assert calls == ["pay-1", "pay-1"]  # a failure is not kept
    await store.close()
