"""Tools: ``@tool``, schemas from type hints, argument coercion, name repair, batch planning.

Importing this package is cheap: pydantic is loaded only when the first tool is created.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.tools.base import Tool
from tether.tools.context import CancelSignal, ToolContext
from tether.tools.decorator import as_tool, tool
from tether.tools.media import ToolOutput
from tether.tools.output import format_tool_output
from tether.tools.planner import plan_batches
from tether.tools.repair import describe_available, repair_tool_name
from tether.tools.source import ToolSource, expand_tools, tool_sources

if TYPE_CHECKING:
    from tether.agents.delegate import DelegateTool


def clarify(name: str = "clarify") -> Tool:
    """The opt-in ``clarify`` tool (``tether.tools.clarify``): the model asks the user a
    question; the run suspends and the answer is the tool's result."""
    from tether.tools.clarify import clarify as build

    return build(name)


def delegate(**options: Any) -> DelegateTool:
    """The opt-in ``delegate`` tool (``tether.agents.delegate``: a child agent with a
    subset of the parent's tools, bounded by depth and count)."""
    from tether.agents.delegate import delegate as build

    return build(**options)


__all__ = [
    "CancelSignal",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolSource",
    "as_tool",
    "clarify",
    "delegate",
    "describe_available",
    "expand_tools",
    "format_tool_output",
    "plan_batches",
    "repair_tool_name",
    "tool",
    "tool_sources",
]
