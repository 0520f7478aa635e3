"""MCP (Model Context Protocol) servers as tether tools: ``from tether.mcp import MCPServer``.

Needs the ``mcp`` SDK (``pip install 'tether[mcp]'``). Importing ``tether`` does not
load this package; importing it loads the SDK lazily, on the first connection.
"""

from tether.mcp.confirm import ConfirmDestructive
from tether.mcp.errors import MCPConnectionError, MCPResultTooLarge, MCPToolError
from tether.mcp.server import MCPServer
from tether.mcp.tool import MCPTool, ToolHints

__all__ = [
    "ConfirmDestructive",
    "MCPConnectionError",
    "MCPResultTooLarge",
    "MCPServer",
    "MCPTool",
    "MCPToolError",
    "ToolHints",
]
