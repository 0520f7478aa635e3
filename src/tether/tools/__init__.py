"""Tools: ``@tool``, schemas from type hints, argument coercion, name repair, batch planning.

Importing this package is cheap: pydantic is loaded only when the first tool is created.
"""

from tether.tools.base import Tool
from tether.tools.context import CancelSignal, ToolContext
from tether.tools.decorator import as_tool, tool
from tether.tools.output import format_tool_output
from tether.tools.planner import plan_batches
from tether.tools.repair import describe_available, repair_tool_name
from tether.tools.source import ToolSource, expand_tools, tool_sources

__all__ = [
    "CancelSignal",
    "Tool",
    "ToolContext",
    "ToolSource",
    "as_tool",
    "describe_available",
    "expand_tools",
    "format_tool_output",
    "plan_batches",
    "repair_tool_name",
    "tool",
    "tool_sources",
]
