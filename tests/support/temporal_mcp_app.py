"""A Temporal app whose tools come from an MCP server (the fixture server over stdio):
``temporal_mcp_app:agent_factory``. The model squares 7 with the server's ``square`` tool
(behind a Confirm), then answers with the result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tether import Agent
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.mcp import MCPServer
from tether.models import ScriptedModel

FIXTURE = str(Path(__file__).parent / "mcp_fixture_server.py")


class ConfirmSquares(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm("square it?") if event.tool_call.name == "square" else None


def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
    if messages[-1].role == "tool":
        return "the square is " + messages[-1].tool_results[0].content
    assert "square" in {t["name"] for t in tools}, tools  # the server's tools are offered
    return {"tool_calls": [{"name": "square", "args": {"n": 7}}]}


def agent_factory(session_id: str) -> Agent:
    server = MCPServer.stdio(sys.executable, [FIXTURE, "stdio"])
    return Agent(
        model=ScriptedModel(script),
        tools=[server],
        interventions=[ConfirmSquares()],
        session_id=session_id,
    )
