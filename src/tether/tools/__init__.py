"""Tools: ``@tool``, schemas from type hints, tool sources; opt-in clarify, delegate, todo,
execute_code, memory, session_search.

Importing this package is cheap: pydantic is loaded only when the first tool is created.
The loop's internals (name repair, batch planning, output formatting, source expansion)
live in their own modules and are not part of this package's names.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from tether.tools.base import Tool
from tether.tools.clarify import clarify  # eager, like todo: the module has the same name
from tether.tools.context import CancelSignal, ToolContext
from tether.tools.decorator import as_tool, tool
from tether.tools.execute_code import execute_code  # eager, as todo
from tether.tools.media import ToolOutput
from tether.tools.memory import memory  # eager, like todo: the module has the same name
from tether.tools.session_search import session_search  # eager, like todo
from tether.tools.source import ToolSource
from tether.tools.todo import todo  # eager: a lazy import would rebind the name to the module

if TYPE_CHECKING:
    from tether.agents.delegate import DelegateTool


def delegate(**options: Any) -> DelegateTool:
    """The opt-in ``delegate`` tool (``tether.agents.delegate``: a child agent with a
    subset of the parent's tools, bounded by depth and count)."""
    from tether.agents.delegate import delegate as build

    return build(**options)


# Loop internals once exported here: still importable for one release, with a warning.
_MOVED = {
    "describe_available": "tether.tools.repair",
    "repair_tool_name": "tether.tools.repair",
    "plan_batches": "tether.tools.planner",
    "format_tool_output": "tether.tools.output",
    "expand_tools": "tether.tools.source",
    "tool_sources": "tether.tools.source",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.tools' has no attribute {name!r}")
    warnings.warn(
        f"tether.tools.{name} is a loop internal and leaves tether.tools in the next release; "
        f"import it from {module}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module), name)


__all__ = [
    "CancelSignal",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolSource",
    "as_tool",
    "clarify",
    "delegate",
    "execute_code",
    "memory",
    "session_search",
    "todo",
    "tool",
]
