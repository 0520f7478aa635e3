"""The HTTP+SSE transport, against the SDK-written fixture server served over SSE."""

from __future__ import annotations

import socket

import pytest

from tether import Agent
from tether.errors import ConfigurationError
from tether.mcp import MCPConnectionError, MCPServer
from tether.models import ScriptedModel


def test_tools_calls_headers_and_list_changed_over_sse(start_http):
    url = start_http("sse")
    assert url.endswith("/sse")
    offered: list[list[str]] = []

    def script(messages, specs):
        offered.append(sorted(s["name"] for s in specs))
        if len(offered) == 1:
            return {
                "tool_calls": [
                    {"name": "echo", "args": {"text": "over sse"}},
                    {"name": "square", "args": {"n": 3}},
                    {"name": "header", "args": {"name": "X-Api-Key"}},
                ]
            }
        if len(offered) == 2:
            return {"tool_calls": [{"name": "grow", "args": {}}]}
        if len(offered) == 3:
            return {"tool_calls": [{"name": "extra", "args": {"word": "sse"}}]}
        return "done"

    with MCPServer.sse(url, headers={"X-Api-Key": "k-sse"}, name="fixture") as server:
        agent = Agent(ScriptedModel(script), tools=[server], store=None)
        assert agent("go").stop_reason == "end_turn"
        results = [r.content for m in agent.messages for r in m.tool_results]
        assert server.connects == 1
    assert results == ["over sse", '{"n":3,"square":9}', "k-sse", "grown", '{"result":"SSE"}']
    assert "extra" in offered[2]
    assert "fail" not in offered[2]


def test_a_bad_sse_url_is_refused_when_built():
    with pytest.raises(ConfigurationError, match=r"MCPServer.sse: url must be an http:// or"):
        MCPServer.sse("ftp://127.0.0.1/sse")


def test_nothing_listening_on_the_sse_url_is_a_clear_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = MCPServer.sse(f"http://127.0.0.1:{port}/sse", startup_timeout=5)
    with pytest.raises(
        MCPConnectionError, match=rf"could not start MCP server '127.0.0.1:{port}/sse'"
    ):
        server.tools()
    server.close()
