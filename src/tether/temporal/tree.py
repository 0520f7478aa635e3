"""An agent tree with every model and tool moved to activities, and the way back.

A sub-agent runs inside its parent's workflow as it runs inside its parent's process
today: its own child session in the store, its interrupts lifted to the top with their
addresses, answers routed down. Only its calls move: each agent of the tree gets an
:class:`ActivityModel` and :class:`ActivityTool` s that name the agent by its *path*
(the sub-agent tool names from the top), and the worker finds the same agent in the
tree its factory builds (:func:`agent_at`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tether.errors import ConfigurationError


def proxied(agent: Any, session_id: str, path: tuple[str, ...] = (), store: Any = None) -> Any:
    """``agent`` (and its sub-agents) with model and tool bodies as activities; ``store``
    (the top only) replaces its store."""
    from tether.agents.subagent import SubAgentTool
    from tether.temporal.model_proxy import ActivityModel
    from tether.temporal.tool_proxy import ActivityTool

    runtime = agent.runtime
    tools: list[Any] = []
    for tool in runtime.toolset.tools:
        if isinstance(tool, SubAgentTool):
            child = proxied(tool.lookup_agent(agent), session_id, (*path, tool.name))
            tools.append(
                SubAgentTool(
                    child,
                    name=tool.name,
                    description=tool.description,
                    output_type=tool.output_type,
                )
            )
        else:
            tools.append(ActivityTool(tool, session_id, path))
    model = ActivityModel(getattr(runtime.model, "name", "model"), session_id, path)
    changes: dict[str, Any] = {"model": model, "tools": tools}
    if store is not None:
        changes.update(store=store, session_id=session_id)
    return agent.clone(**changes)


def _sub_agent(tool: Any, parent: Any, session_id: str, path: tuple[str, ...]) -> Any:
    """``tool`` with its child proxied: a factory of fresh proxied children when it runs
    calls in parallel (``read_only`` is its parallel flag), else one proxied child."""
    from tether.agents.subagent import SubAgentTool

    options = {"name": tool.name, "description": tool.description, "output_type": tool.output_type}
    if tool.read_only:
        return SubAgentTool(
            lambda: proxied(tool.make_child(None), session_id, path), parallel=True, **options
        )
    return SubAgentTool(proxied(tool.lookup_agent(parent), session_id, path), **options)


def agent_at(top: Any, path: Sequence[str]) -> Any:
    """The agent at ``path`` in the tree of ``top`` (the worker's side of :func:`proxied`)."""
    from tether.agents.subagent import SubAgentTool

    agent = top
    for name in path:
        tool = agent.runtime.toolset.by_name.get(name)
        if not isinstance(tool, SubAgentTool):
            raise ConfigurationError(f"the worker's agent has no sub-agent at {'/'.join(path)!r}")
        agent = tool.lookup_agent(agent)
    return agent
