"""The connection: bad servers fail clearly, a dead server restarts, timeouts and cancel."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

import pytest

from tether import Agent
from tether.errors import ConfigurationError
from tether.mcp import MCPConnectionError, MCPServer, MCPToolError
from tether.models import ScriptedModel

from .conftest import fixture_args


def by_name(server: MCPServer) -> dict:
    return {t.name: t for t in server.tools()}


def test_a_command_that_does_not_exist():
    with (
        MCPServer.stdio("/no/such/mcp-server") as server,
        pytest.raises(MCPConnectionError) as info,
    ):
        server.tools()
    assert str(info.value) == (
        "could not start MCP server 'mcp-server': command "
        "'/no/such/mcp-server' was not found (not an executable file, nor on PATH); check the "
        "command, or give its full path"
    )


def test_a_server_that_writes_garbage_to_stdout():
    with MCPServer.stdio(sys.executable, fixture_args("garbage"), name="noisy") as server:
        started = time.monotonic()
        with pytest.raises(MCPConnectionError) as info:
            server.tools()
    assert time.monotonic() - started < 10  # not the 30 s startup timeout
    message = str(info.value)
    assert message.startswith("MCP server 'noisy' sent something that is not an MCP message (")
    assert "this is not JSON-RPC" in message
    assert message.endswith(
        "a stdio server must write only JSON-RPC lines to stdout (logs go to stderr)"
    )


def test_a_server_that_hangs_at_startup_times_out_clearly():
    with (
        MCPServer.stdio(
            sys.executable, fixture_args("hang"), name="stuck", startup_timeout=1
        ) as server,
        pytest.raises(MCPConnectionError) as info,
    ):
        server.tools()
    assert str(info.value) == (
        "MCP server 'stuck' did not finish starting within 1 s (startup_timeout); check that it "
        "is an MCP server and that it starts, or raise startup_timeout"
    )


def test_a_server_that_exits_at_startup_quotes_its_stderr(tmp_path):
    with (
        MCPServer.stdio(
            sys.executable, ["-c", "import sys; sys.exit('no config file')"], name="quits"
        ) as server,
        pytest.raises(MCPConnectionError) as info,
    ):
        server.tools()
    assert str(info.value).startswith("could not start MCP server 'quits': ")
    assert "the server's stderr ends with: 'no config file'" in str(info.value)


def test_a_tool_whose_schema_is_not_an_object():
    with (
        MCPServer.stdio(sys.executable, fixture_args("badschema"), name="bad") as server,
        pytest.raises(MCPConnectionError) as info,
    ):
        server.tools()
    # The SDK refuses the whole listing; the message names the field.
    assert str(info.value).startswith(
        "could not start MCP server 'bad': ValidationError: 1 validation error for "
        "ListToolsResult\ntools.0.inputSchema.type\n  Input should be 'object'"
    )


def test_a_tool_whose_schema_is_not_a_valid_json_schema():
    with (
        MCPServer.stdio(sys.executable, fixture_args("invalidschema"), name="bad") as server,
        pytest.raises(ConfigurationError) as info,
    ):
        server.tools()
    assert str(info.value) == (
        "MCP server 'bad' offers tool 'odd' with an invalid input schema (42 is not valid "
        "under any of the given schemas); leave it out with deny=['odd']"
    )
    with MCPServer.stdio(sys.executable, fixture_args("invalidschema"), deny=["odd"]) as server:
        assert server.tools() == []


def test_a_stdio_server_that_dies_is_restarted_on_the_next_call():
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        tools = by_name(server)
        first = asyncio.run(tools["pid"].invoke({}))
        with pytest.raises(Exception, match="closed the connection during the call to 'crash'"):
            asyncio.run(tools["crash"].invoke({}))
        second = asyncio.run(tools["pid"].invoke({}))
        assert first != second
        assert server.connects == 2


def test_a_call_past_its_timeout_fails_as_a_timeout():
    with MCPServer.stdio(
        sys.executable, fixture_args(), hints={"slow": {"timeout": 0.5}}
    ) as server:
        script = [{"tool_calls": [{"name": "slow", "args": {"seconds": 5}}]}, "ok"]
        agent = Agent(ScriptedModel(script), tools=server.tools(), store=None)
        started = time.monotonic()
        agent("go")
        (result,) = [r for m in agent.messages for r in m.tool_results]
        assert time.monotonic() - started < 4
        assert (result.status, result.content) == (
            "timeout",
            "Error: tool 'slow' timed out after 0.5 s",
        )
        assert asyncio.run(by_name(server)["echo"].invoke({"text": "alive"})) == "alive"


def test_cancel_stops_an_mcp_call_in_flight_and_tells_the_server(tmp_path):
    marker = tmp_path / "marker"
    with MCPServer.stdio(sys.executable, fixture_args()) as server:
        call = {"name": "wait", "args": {"path": str(marker), "seconds": 30}}
        agent = Agent(
            ScriptedModel([{"tool_calls": [call]}, "ok"]), tools=server.tools(), store=None
        )
        threading.Timer(1.0, agent.cancel).start()
        started = time.monotonic()
        result = agent("go")
        assert time.monotonic() - started < 10
        assert result.stop_reason == "cancelled"
        deadline = time.monotonic() + 5
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.read_text() == "cancelled"  # notifications/cancelled reached the server
        assert asyncio.run(by_name(server)["echo"].invoke({"text": "alive"})) == "alive"


def test_closing_the_server_during_a_call_ends_the_call_with_an_error():
    server = MCPServer.stdio(sys.executable, fixture_args(), name="fx")
    script = [{"tool_calls": [{"name": "slow", "args": {"seconds": 30}}]}, "ok"]
    agent = Agent(ScriptedModel(script), tools=server.tools(), store=None)
    threading.Timer(1.0, server.close).start()
    started = time.monotonic()
    agent("go")
    assert time.monotonic() - started < 15
    (result,) = [r for m in agent.messages for r in m.tool_results]
    assert result.is_error
    assert result.content.startswith("Error: MCPToolError: MCP server 'fx' ")
    server.close()


def test_server_log_messages_go_to_python_logging(caplog):
    with MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server:
        note = by_name(server)["note"]
        with caplog.at_level("INFO", logger="tether.mcp.fx"):
            assert asyncio.run(note.invoke({"text": "disk almost full"})) == "noted"
            assert asyncio.run(note.invoke({"text": "\x1b[2Jcleared"})) == "noted"
            deadline = time.monotonic() + 5
            while len(caplog.records) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
    first, second = [r for r in caplog.records if r.name == "tether.mcp.fx"]
    assert first.levelname == "WARNING"
    assert first.getMessage() == "disk almost full"
    assert second.getMessage() == "\\x1b[2Jcleared"  # no terminal control from a server


def test_roots_are_offered_only_when_configured(tmp_path):
    with MCPServer.stdio(
        sys.executable, fixture_args(), roots=[tmp_path, "file:///srv/data"]
    ) as server:
        listed = asyncio.run(by_name(server)["roots"].invoke({}))
    assert listed == f"{tmp_path.resolve().as_uri()}, file:///srv/data"
    with (
        MCPServer.stdio(sys.executable, fixture_args(), name="fx") as server,
        pytest.raises(MCPToolError) as info,
    ):
        asyncio.run(by_name(server)["roots"].invoke({}))
    assert (
        str(info.value) == "MCP server 'fx' refused the call to 'roots': List roots not supported"
    )
    with pytest.raises(
        ConfigurationError, match="roots= takes directories or file:// URIs, got 'https://x/y'"
    ):
        MCPServer.stdio(sys.executable, fixture_args(), roots=["https://x/y"])


def test_concurrent_first_calls_share_one_connection_before_and_after_a_close():
    with MCPServer.stdio(sys.executable, fixture_args()) as server:
        echo = by_name(server)["echo"]
        server.close()  # the next calls race to reconnect

        async def both() -> list[str]:
            return await asyncio.gather(echo.invoke({"text": "a"}), echo.invoke({"text": "b"}))

        assert asyncio.run(both()) == ["a", "b"]
        server.close()
        assert asyncio.run(both()) == ["a", "b"]
        assert server.connects == 3
