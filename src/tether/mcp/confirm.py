"""ConfirmDestructive: an opt-in intervention that asks a human before MCP tools that write."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tether.control.interventions import Action, Confirm, InterventionHandler
from tether.mcp.tool import MCPTool

if TYPE_CHECKING:
    from tether.control.events import BeforeToolCall

_MAX_SHOWN = 300


class ConfirmDestructive(InterventionHandler):
    """Confirm before every call to a destructive MCP tool (``writes=True``: every MCP
    tool that is not read-only). Python tools are not affected.

    The decision uses the tool's hints, which come from the server's annotations unless
    overridden (``MCPServer(hints=..., trust_annotations=False)``): an untrusted server
    can claim a write is read-only, so override what matters.
    """

    name = "mcp-confirm"

    def __init__(self, *, writes: bool = False) -> None:
        self.writes = writes

    def before_tool_call(self, event: BeforeToolCall) -> Action:
        tool = event.selected_tool
        if not isinstance(tool, MCPTool):
            return None
        if not (tool.destructive or (self.writes and not tool.read_only)):
            return None
        call = event.tool_call
        arguments = json.dumps(call.arguments, ensure_ascii=False, default=str)
        if len(arguments) > _MAX_SHOWN:
            arguments = arguments[: _MAX_SHOWN - 3] + "..."
        kind = "destructive" if tool.destructive else "writing"
        return Confirm(
            f"run {kind} tool {tool.mcp_name!r} of MCP server {tool.server!r} "
            f"with arguments {arguments}?"
        )
