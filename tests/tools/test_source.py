"""Tool sources expand into Tools next to plain functions; name clashes are errors."""

from __future__ import annotations

import pytest

from tether.errors import ConfigurationError
from tether.tools import Tool, ToolSource, as_tool, tool
from tether.tools.source import expand_tools, tool_sources


class Pair:
    """A tool source offering two tools whose names start with ``prefix``."""

    def __init__(self, prefix: str) -> None:
        self.closed = 0
        self._tools = [
            Tool(lambda: "a", name=f"{prefix}a", description="a"),
            Tool(lambda: "b", name=f"{prefix}b", description="b"),
        ]

    def tools(self) -> list[Tool]:
        return self._tools

    def close(self) -> None:
        self.closed += 1

    def __repr__(self) -> str:
        return "Pair()"


def hello() -> str:
    """Say hello."""
    return "hello"


def test_sources_functions_and_tools_expand_in_order():
    source = Pair("p_")
    own = tool(hello, name="greet")
    tools = expand_tools([hello, source, own])
    assert [t.name for t in tools] == ["hello", "p_a", "p_b", "greet"]
    assert tools[1] is source.tools()[0]
    assert isinstance(source, ToolSource)
    assert not isinstance(own, ToolSource)
    assert tool_sources([hello, source, own]) == [source]


def test_a_name_clash_says_where_each_tool_came_from():
    with pytest.raises(ConfigurationError) as info:
        expand_tools([Pair(""), tool(hello, name="a")])
    assert str(info.value).startswith(
        "two tools are named 'a': one from Pair(), one from the tools list; tool names must be unique"
    )


def test_as_tool_refuses_a_source_and_says_how_to_expand_it():
    with pytest.raises(TypeError, match=r"Pair\(\) offers several tools, not one"):
        as_tool(Pair(""))
