"""The tool a Confirm is about, anywhere in an agent tree.

A Confirm lifted from a child (or a grandchild) names the child's tool call, which
the top agent does not have. Edited arguments answered at the top are checked
against that child's tool before anything is journaled: :func:`tool_at` walks the
interrupt's address through the sub-agent tools to the agent that raised it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.agents.addresses import SEPARATOR

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.tools.base import Tool


def tool_at(agent: Agent, point: str, tool_name: str) -> Tool | None:
    """The tool ``tool_name`` of the agent at the address in ``point`` (an interrupt's
    point: ``researcher#p1/coder#k1/before_tool_call``), looked up from ``agent``, the top;
    None when a step of the path is not a sub-agent tool of the agent before it."""
    from tether.agents.subagent import SubAgentTool

    current = agent
    for where in point.split(SEPARATOR)[:-1]:
        holder = current.tool_map.get(where.partition("#")[0])
        if not isinstance(holder, SubAgentTool):
            return None
        current = holder.lookup_agent(current)
    return current.tool_map.get(tool_name)
