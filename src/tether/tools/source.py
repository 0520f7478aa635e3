"""Tool sources: objects that stand for several tools (an MCP server, say) in a tools list."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from tether.errors import ConfigurationError
from tether.tools.base import Tool
from tether.tools.decorator import as_tool


@runtime_checkable
class ToolSource(Protocol):
    """Something that offers several tools and may hold a connection open.

    ``tools()`` returns the tools it offers now (connecting if needed; the same
    Tool objects on each call while the offer is unchanged); ``close()`` releases
    what it holds and may be called more than once; the source stays usable.
    """

    def tools(self) -> list[Tool]: ...

    def close(self) -> None: ...


ToolItem: TypeAlias = Tool | Callable[..., Any] | ToolSource


def is_tool_source(obj: object) -> bool:
    """True for a tool source (not a Tool or a plain function)."""
    return not isinstance(obj, Tool) and isinstance(obj, ToolSource)


def expand_tools(items: Iterable[ToolItem], *, connect: bool = True) -> list[Tool]:
    """Tools, functions and tool sources flattened into Tools, in order.

    ``connect=False`` (how an Agent expands its tools): a source that can change (an
    MCP server, see tools/refresh.py) gives what it has listed so far, without any I/O
    (nothing before its first use); the Agent takes its tools up when a run first
    needs them. Raises ConfigurationError when two tools end up with the same name,
    saying where each came from (give a source a name prefix to tell them apart).
    """
    tools: list[Tool] = []
    origin: dict[str, str] = {}
    for item in items:
        if isinstance(item, ToolSource) and not isinstance(item, Tool):
            found, where = tools_of(item, connect=connect), repr(item)
        else:
            found, where = [as_tool(item)], "the tools list"
        for tool in found:
            if tool.name in origin:
                raise ConfigurationError(
                    f"two tools are named {tool.name!r}: one from {origin[tool.name]}, one from "
                    f"{where}; tool names must be unique: give a source a name prefix "
                    "(e.g. MCPServer.stdio(..., prefix='git_')) or filter it with allow=/deny="
                )
            origin[tool.name] = where
            tools.append(tool)
    return tools


def tools_of(source: ToolSource, *, connect: bool) -> list[Tool]:
    """``source.tools()``; without ``connect``, a changing source's ``offered()`` (no I/O)."""
    offered = getattr(source, "offered", None)
    if not connect and callable(offered) and isinstance(getattr(source, "generation", None), int):
        return list(offered())
    return source.tools()


def tool_sources(items: Iterable[object]) -> list[ToolSource]:
    """The tool sources among ``items`` (to close them with the agent)."""
    return [i for i in items if isinstance(i, ToolSource) and not isinstance(i, Tool)]
