"""Agents that delegate: sub-agents as tools, child sessions, nested interrupts.

``agent.as_tool(name, description)`` or ``as_tool(factory, name=...)`` makes a child
agent a tool of its parent; see docs/design.md, "Sub-agents".
"""

from tether.agents.addresses import address, child_session_id, lift, lifted_id
from tether.agents.budget import SharedBudget
from tether.agents.delegate import DelegateTool, delegate
from tether.agents.subagent import AgentFactory, SubAgentTool, as_tool
from tether.inheritance import agent_path

__all__ = [
    "AgentFactory",
    "DelegateTool",
    "SharedBudget",
    "SubAgentTool",
    "address",
    "agent_path",
    "as_tool",
    "child_session_id",
    "delegate",
    "lift",
    "lifted_id",
]
