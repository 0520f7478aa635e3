"""An agent tree with every model and tool moved to activities, and the way back.

A sub-agent runs inside its parent's workflow as it runs inside its parent's process
today: its own child session in the store, its interrupts lifted to the top with their
addresses, answers routed down. Only its calls move: each agent of the tree gets an
:class:`ActivityModel` and :class:`ActivityTool` s that name the agent by its *path*
(the sub-agent tool names from the top), and the worker finds the same agent in the
tree its factory builds (:func:`agent_at`).

A tool source (an MCP server) is listed where it can connect: on the worker, by the
``tether.describe`` activity (:func:`described`, once per agent of the tree that has
sources, before the run; its answer is in the history, so a replay lists nothing). Its
tools become :class:`SpecTool` s: the worker's tool validates the arguments when it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, Final

from tether.errors import ConfigurationError

DESCRIBE_ACTIVITY: Final = "tether.describe"
Described = dict[tuple[str, ...], list[dict[str, Any]]]
"""Path of an agent in the tree -> the tools its sources offer (name, schema, flags)."""


async def described(agent: Any, session_id: str, path: tuple[str, ...] = ()) -> Described:
    """The tools of every tool source in ``agent``'s tree, listed by the worker."""
    from temporalio import workflow
    from temporalio.common import RetryPolicy

    from tether.agents.subagent import SubAgentTool
    from tether.tools.source import is_tool_source

    out: Described = {}
    if any(is_tool_source(item) for item in agent.runtime.toolset.items):
        out[path] = await workflow.execute_activity(
            DESCRIBE_ACTIVITY,
            {"session_id": session_id, "path": list(path)},
            start_to_close_timeout=timedelta(minutes=2),
            retry_policy=RetryPolicy(maximum_attempts=3),
        )
    for tool in agent.runtime.toolset.tools:
        if isinstance(tool, SubAgentTool):
            child = tool.lookup_agent(agent)
            out.update(await described(child, session_id, (*path, tool.name)))
    return out


def proxied(
    agent: Any,
    session_id: str,
    path: tuple[str, ...] = (),
    store: Any = None,
    sources: Described | None = None,
    decorate: Callable[[Any], None] | None = None,
) -> Any:
    """``agent`` (and its sub-agents) with model and tool bodies as activities; ``store``
    (the top only) replaces its store; ``sources``: what :func:`described` listed;
    ``decorate`` is applied to every agent built (tracing: ``tracing.tracer_for``)."""
    from tether.agents.subagent import SubAgentTool
    from tether.temporal.model_proxy import ActivityModel
    from tether.temporal.tool_proxy import ActivityTool, SpecTool
    from tether.tools.decorator import as_tool
    from tether.tools.source import is_tool_source

    known = sources or {}
    tools: list[Any] = []
    listed = False
    for item in agent.runtime.toolset.items:
        if is_tool_source(item):
            if not listed:  # one listing for all of this agent's sources
                tools += [SpecTool(spec, session_id, path) for spec in known.get(path, [])]
                listed = True
            continue
        tool = as_tool(item)
        if isinstance(tool, SubAgentTool):
            where = (*path, tool.name)
            tools.append(_sub_agent(tool, agent, session_id, where, known, decorate))
        else:
            tools.append(ActivityTool(tool, session_id, path))
    model = ActivityModel(getattr(agent.runtime.model, "name", "model"), session_id, path)
    changes: dict[str, Any] = {"model": model, "tools": tools}
    if store is not None:
        changes.update(store=store, session_id=session_id)
    twin = agent.clone(**changes)
    if decorate is not None:
        decorate(twin)
    return twin


def _sub_agent(
    tool: Any,
    parent: Any,
    session_id: str,
    path: tuple[str, ...],
    sources: Described,
    decorate: Callable[[Any], None] | None,
) -> Any:
    """``tool`` with its child proxied: a factory of fresh proxied children when it runs
    calls in parallel (``read_only`` is its parallel flag), else one proxied child."""
    from tether.agents.subagent import SubAgentTool

    options = {"name": tool.name, "description": tool.description, "output_type": tool.output_type}
    if tool.read_only:
        return SubAgentTool(
            lambda: proxied(
                tool.make_child(None), session_id, path, sources=sources, decorate=decorate
            ),
            parallel=True,
            **options,
        )
    child = proxied(tool.lookup_agent(parent), session_id, path, sources=sources, decorate=decorate)
    return SubAgentTool(child, **options)


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


def source_tools(agent: Any) -> list[Any]:
    """The tools ``agent``'s sources offer now, connecting them (blocking: call it in a
    thread). The worker's side of :func:`described`."""
    from tether.tools.source import is_tool_source

    return [t for item in agent.runtime.toolset.items if is_tool_source(item) for t in item.tools()]
