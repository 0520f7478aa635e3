"""MCPServer against the reference mcp-server-time (stdio): tools, hints, filters, sharing."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from tether import Agent
from tether.control import BeforeToolCall
from tether.errors import ConfigurationError
from tether.mcp import MCPServer, MCPTool
from tether.messages import ToolCall
from tether.models import ScriptedModel
from tether.tools import as_tool, tool
from tether.tools.planner import plan_batches
from tether.tools.source import expand_tools

from .conftest import TIME_SERVER, fixture_args

PARIS = {"name": "get_current_time", "args": {"timezone": "Europe/Paris"}}
CONVERT = {
    "name": "convert_time",
    "args": {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
}


@pytest.fixture
def time_server():
    with MCPServer.stdio(TIME_SERVER) as server:
        yield server


def results(agent: Agent) -> list:
    return [r for m in agent.messages for r in m.tool_results]


def test_tools_are_listed_with_their_schema_and_hints(time_server):
    tools = {t.name: t for t in time_server.tools()}
    assert set(tools) == {"get_current_time", "convert_time"}
    now = tools["get_current_time"]
    assert isinstance(now, MCPTool)
    assert now.server == "mcp-server-time"
    assert now.mcp_name == "get_current_time"
    assert now.spec()["input_schema"]["required"] == ["timezone"]
    assert "timezone" in now.description.lower()
    assert (now.read_only, now.idempotent, now.destructive, now.open_world) == (
        True,
        True,
        False,
        False,
    )
    assert now.annotations["readOnlyHint"] is True
    assert time_server.tools()[0] is tools["get_current_time"]  # same objects while unchanged


def test_an_agent_calls_mcp_tools_next_to_python_tools_in_any_event_loop(time_server):
    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [PARIS, {"name": "shout", "args": {"text": "hi"}}]}
        return "done"

    agent = Agent(ScriptedModel(script), tools=[*time_server.tools(), shout], store=None)
    assert agent("what time is it?").stop_reason == "end_turn"  # the sync facade's loop
    paris, shouted = results(agent)
    assert json.loads(paris.content)["timezone"] == "Europe/Paris"
    assert not paris.is_error
    assert shouted.content == "HI"
    asyncio.run(agent.invoke_async("again"))  # another event loop, the same connection
    assert json.loads(results(agent)[2].content)["timezone"] == "Europe/Paris"
    assert time_server.connects == 1


def test_read_only_tools_share_a_parallel_group_and_hooks_see_the_hints(time_server):
    seen = []

    def script(messages, specs):
        return {"tool_calls": [PARIS, CONVERT]} if messages[-1].role == "user" else "ok"

    tools = time_server.tools()
    calls = [ToolCall("1", PARIS["name"], PARIS["args"]), ToolCall("2", "convert_time", {})]
    assert plan_batches(calls, {t.name: t for t in tools}) == [[0, 1]]
    agent = Agent(ScriptedModel(script), tools=tools, store=None)

    @agent.on(BeforeToolCall)
    def look(event):
        t = event.selected_tool
        seen.append((t.name, t.read_only, t.destructive, t.open_world))

    agent("go")
    assert sorted(seen) == [
        ("convert_time", True, False, False),
        ("get_current_time", True, False, False),
    ]


def test_a_bad_argument_is_refused_before_the_call_with_the_schema_error(time_server):
    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": "get_current_time", "args": {"timezone": 5}}]}
        return "ok"

    agent = Agent(ScriptedModel(script), tools=time_server.tools(), store=None)
    agent("go")
    (result,) = results(agent)
    assert result.is_error
    assert (
        "tool 'get_current_time': argument 'timezone': 5 is not of type 'string'" in result.content
    )


def test_the_server_reports_a_tool_error_to_the_model(time_server):
    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": "get_current_time", "args": {"timezone": "Nowhere/X"}}]}
        return "ok"

    agent = Agent(ScriptedModel(script), tools=time_server.tools(), store=None)
    agent("go")
    (result,) = results(agent)
    assert result.is_error
    assert result.status == "error"
    assert result.content.startswith("Error: MCPToolError:")
    assert "Nowhere/X" in result.content


def test_prefix_allow_deny_and_user_hints():
    with MCPServer.stdio(
        TIME_SERVER,
        prefix="t_",
        allow=["get_current_time", "convert_time"],
        deny=["convert_time"],
        hints={"get_current_time": {"read_only": False, "destructive": True, "timeout": 5}},
    ) as server:
        (only,) = server.tools()
    assert only.name == "t_get_current_time"
    assert only.mcp_name == "get_current_time"
    assert (only.read_only, only.destructive, only.idempotent, only.timeout) == (
        False,
        True,
        True,
        5,
    )


def test_untrusted_annotations_make_every_tool_a_destructive_write():
    with MCPServer.stdio(TIME_SERVER, trust_annotations=False) as server:
        tools = server.tools()
    assert all(
        t.destructive and t.open_world and not t.read_only and not t.idempotent for t in tools
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"allow": ["get_time"]},
            "does not offer 'get_time' (named in allow=, deny= or hints=); it offers: convert_time, get_current_time",
        ),
        (
            {"hints": {"convert_time": {"readonly": True}}},
            "hints for MCP tool 'convert_time' name unknown keys ['readonly']",
        ),
        (
            {"hints": {"convert_time": {"read_only": "yes"}}},
            "hints for MCP tool 'convert_time': read_only must be True or False, got 'yes'",
        ),
    ],
)
def test_filters_and_hints_naming_what_the_server_lacks_are_errors(options, message):
    with (
        MCPServer.stdio(TIME_SERVER, **options) as server,
        pytest.raises(ConfigurationError) as info,
    ):
        server.tools()
    assert message in str(info.value)


def test_bad_options_are_refused_at_construction():
    with pytest.raises(
        ConfigurationError, match="args must be a sequence of strings, got the string '-v'"
    ):
        MCPServer.stdio(TIME_SERVER, "-v")
    with pytest.raises(
        ConfigurationError, match=r"prefix must use only letters, digits, '_' or '-', got 'a\.b'"
    ):
        MCPServer.stdio(TIME_SERVER, prefix="a.b")
    with pytest.raises(
        ConfigurationError, match="allow= takes a list of tool names, got the string 'x'"
    ):
        MCPServer.stdio(TIME_SERVER, allow="x")
    with pytest.raises(
        ConfigurationError, match="url must be an http:// or https:// URL, got 'ftp://h/x'"
    ):
        MCPServer.http("ftp://h/x")


def test_two_servers_with_the_same_tool_name_do_not_collide_silently(time_server):
    with MCPServer.stdio(TIME_SERVER, name="clock") as other:
        with pytest.raises(ConfigurationError) as info:
            expand_tools([time_server, other])
        assert str(info.value).startswith(
            "two tools are named 'get_current_time': one from MCPServer('mcp-server-time'), "
            "one from MCPServer('clock');"
        )
        assert "prefix" in str(info.value)
    with MCPServer.stdio(TIME_SERVER, prefix="b_") as prefixed:
        names = [t.name for t in expand_tools([time_server, prefixed])]
        assert names == ["get_current_time", "convert_time", "b_get_current_time", "b_convert_time"]


def test_a_server_goes_in_the_agents_tools_list_and_closes_with_the_agent():
    server = MCPServer.stdio(sys.executable, fixture_args())

    def script(messages, specs):
        if messages[-1].role == "user":
            return {"tool_calls": [{"name": "pid", "args": {}}]}
        return "done"

    with Agent(ScriptedModel(script), tools=[server], store=None) as agent:
        assert agent.tool_sources == [server]
        assert "pid" in agent.tool_map
        assert agent("which process?").text == "done"
        first = results(agent)[0].content
        assert server.connects == 1
    # leaving the block closed the connection: the next use starts the server again
    assert asyncio.run(agent.tool_map["pid"].invoke({})) != first
    assert server.connects == 2
    agent.close()


def test_as_tool_alone_refuses_a_server_and_says_where_it_goes(time_server):
    with pytest.raises(
        ConfigurationError,
        match=r"offers several tools, not one: put it in an agent's tools list, "
        r"Agent\(tools=\[source, \.\.\.\]\)",
    ):
        as_tool(time_server)


def test_close_stops_the_server_and_the_next_use_reconnects():
    server = MCPServer.stdio(sys.executable, fixture_args())
    try:
        pid_tool = {t.name: t for t in server.tools()}["pid"]
        first = asyncio.run(pid_tool.invoke({}))
        server.close()
        second = asyncio.run(pid_tool.invoke({}))
        assert first != second
        assert server.connects == 2
    finally:
        server.close()
