"""The errors tether's MCP client raises (all TetherError subclasses)."""

from __future__ import annotations

from tether.errors import TetherError


class MCPConnectionError(TetherError):
    """An MCP server could not be started, reached, or kept: the message says which and why."""


class MCPToolError(TetherError):
    """An MCP tool call failed: the server reported ``isError``, the call broke, or the
    tool is no longer offered. The model sees the message as an error tool result."""


class MCPResultTooLarge(MCPToolError):
    """An MCP tool returned more text than the server's ``max_result_chars``."""
