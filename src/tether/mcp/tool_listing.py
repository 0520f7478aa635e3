"""An MCP server's ``tools/list``, every page, bounded in time, pages and tools."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tether.mcp.errors import MCPConnectionError

if TYPE_CHECKING:
    import mcp_types

    from mcp import ClientSession


async def list_all_tools(
    session: ClientSession, label: str, *, list_timeout: float, max_tools: int
) -> list[mcp_types.Tool]:
    """Every tool the server of ``label`` lists, page after page, within ``list_timeout``
    seconds; more than ``max_tools`` tools or 1000 pages is an MCPConnectionError."""
    from mcp_types import PaginatedRequestParams

    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    try:
        async with asyncio.timeout(list_timeout):
            for _ in range(1000):
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                if len(tools) > max_tools:
                    raise MCPConnectionError(
                        f"MCP server {label!r} lists more than {max_tools:,} tools "
                        f"(max_tools={max_tools:,}): tether does not take them up; "
                        "raise max_tools on the MCPServer if the server really needs that many"
                    )
                cursor = page.next_cursor
                if not cursor:
                    return tools
    except TimeoutError:
        raise MCPConnectionError(
            f"MCP server {label!r} did not list its tools within {list_timeout:g} s (list_timeout)"
        ) from None
    raise MCPConnectionError(f"MCP server {label!r} listed more than 1000 pages of tools")
