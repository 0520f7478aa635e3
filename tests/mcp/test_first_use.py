"""An MCPServer in Agent(tools=[...]) connects when a run first needs its tools, not when
the Agent is built: an agent built to validate an edit or show a session starts nothing."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tether import Agent
from tether.errors import HookError
from tether.mcp import MCPServer
from tether.models import ScriptedModel

from .conftest import FIXTURE, fixture_args


def fixture_children() -> list[int]:
    """Our child processes running the fixture server."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        if ppid == os.getpid() and FIXTURE.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_building_the_agent_starts_no_process_and_a_run_then_works():
    assert fixture_children() == []
    turns = [{"tool_calls": [{"name": "pid", "args": {}}]}, "done"]
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        agent = Agent(ScriptedModel(turns), tools=[server], store=None)
        assert fixture_children() == []
        assert not server.listed
        assert server.connects == 0
        assert agent.tools == []
        result = agent.run("go")
        assert result.text == "done"
        (child,) = fixture_children()
        (ran,) = [r for m in agent.messages for r in m.tool_results]
        assert ran.content == str(child)
        assert server.connects == 1
        assert "pid" in agent.tool_map
        assert "echo" in [s["name"] for s in agent.tool_specs]
    assert fixture_children() == []


def test_a_tool_looked_up_outside_a_run_lists_the_server_then():
    """Validating an edited call needs the tool: the lookup connects, once."""
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        agent = Agent(ScriptedModel(["done"]), tools=[server], store=None)
        assert fixture_children() == []
        assert agent.tool_map.get("nope") is None  # a miss lists the server first
        assert server.connects == 1
        echo = agent.tool_map.get("echo")
        assert echo is not None
        assert echo.check_edit({"text": "a"}, {"text": "b"}) == {"text": "b"}
        assert agent.tool_map["echo"] is echo
        assert server.connects == 1


def test_a_server_that_cannot_start_fails_the_first_run_clearly_not_the_build():
    agent = Agent(
        ScriptedModel(["done"]), tools=[MCPServer.stdio("/no/such/mcp-server")], store=None
    )
    with pytest.raises(HookError) as info:
        agent.run("go")
    assert str(info.value) == (
        "MCPServer('mcp-server') could not give its tools when the run started: could not "
        "start MCP server 'mcp-server': command '/no/such/mcp-server' was not found (not an "
        "executable file, nor on PATH); check the command, or give its full path"
    )


def test_a_name_clash_found_at_first_use_fails_every_run_not_only_the_first():
    def echo(text: str) -> str:
        """A local echo, named like the server's."""
        return text

    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        agent = Agent(ScriptedModel(["done", "done"]), tools=[echo, server], store=None)
        for _ in range(2):
            with pytest.raises(HookError) as info:
                agent.run("go")
            assert "two tools are named 'echo': one from the tools list, one from " in str(
                info.value
            )
        assert [t.name for t in agent.tools] == ["echo"]


def test_the_first_listing_runs_off_the_loop():
    """A server slow to start does not hold the agent's event loop while the run waits."""

    async def main() -> tuple[int, BaseException | None]:
        server = MCPServer.stdio(sys.executable, fixture_args("hang"), startup_timeout=1)
        agent = Agent(ScriptedModel(["done"]), tools=[server], store=None)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        try:
            await agent.invoke_async("go")
        except HookError as exc:
            return ticks, exc
        finally:
            ticker.cancel()
            server.close()
        return ticks, None

    ticks, error = asyncio.run(main())
    assert isinstance(error, HookError)
    assert "did not finish starting within 1 s (startup_timeout)" in str(error)
    assert ticks > 20  # about 100 in the second the server took
