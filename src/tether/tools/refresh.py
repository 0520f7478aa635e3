"""Changing tool sources: an agent takes up the tools a source adds or drops at run time.

A source that can change (an MCP server after ``tools/list_changed``) has an int
``generation`` that grows when the set of tools it offers changes, and ``offered()``
returning those tools without any I/O. An Agent holding such a source registers a
:class:`ToolRefresh`; before each model call it compares generations and, when one
moved, rebuilds the agent's tool list in place, so the call about to be made already
sends the new tool specs. Agents without a changing source register nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tether.context.estimate import forget_fixed
from tether.control.events import BeforeModelCall
from tether.control.registry import HookOrder, HookRegistry
from tether.tools.base import Tool
from tether.tools.source import is_tool_source

if TYPE_CHECKING:
    from tether.agent import Agent

_LOG = logging.getLogger("tether.tools")


def changes(source: object) -> bool:
    """True for a tool source whose tools can change while an agent holds it."""
    return isinstance(getattr(source, "generation", None), int) and callable(
        getattr(source, "offered", None)
    )


class ToolRefresh:
    """Keeps an agent's tools in step with its changing sources, at model-call boundaries."""

    def __init__(self, items: Sequence[object], tools: Sequence[Tool]) -> None:
        # What each item of the agent's tools=[...] contributed: a fixed Tool, or a source.
        self._parts: list[Tool | Any] = []
        position = 0
        for item in items:
            if is_tool_source(item):
                self._parts.append(item)
                position += len(item.tools())  # type: ignore[attr-defined]
            else:
                self._parts.append(tools[position])
                position += 1
        self._sources: list[Any] = [p for p in self._parts if changes(p)]
        self._seen = [s.generation for s in self._sources]

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(BeforeModelCall, self.before_model_call, HookOrder.SDK_FIRST)

    def before_model_call(self, event: BeforeModelCall) -> None:
        now = [s.generation for s in self._sources]
        if now != self._seen:
            self._seen = now
            self.apply(event.agent)

    def apply(self, agent: Agent) -> None:
        """Rebuild ``agent.tools``, ``tool_map`` and ``tool_specs`` in place from the sources."""
        tools: list[Tool] = []
        names: dict[str, str] = {}
        for part in self._parts:
            if isinstance(part, Tool):
                found, where = [part], "the tools list"
            else:
                found = part.offered() if changes(part) else part.tools()
                where = repr(part)
            for tool in found:
                if tool.name in names:
                    _LOG.warning(
                        "%s now offers a tool named %r, which %s already provides; the agent "
                        "keeps the first (give the source a name prefix)",
                        where,
                        tool.name,
                        names[tool.name],
                    )
                    continue
                names[tool.name] = where
                tools.append(tool)
        before = set(agent.tool_map)
        agent.tools[:] = tools
        agent.tool_map.clear()
        agent.tool_map.update((t.name, t) for t in tools)
        agent.tool_specs[:] = [t.spec() for t in tools]  # the list the model call sends
        forget_fixed(agent.tool_specs)  # the context estimate counts the new specs
        added, dropped = sorted(set(names) - before), sorted(before - set(names))
        if added or dropped:
            _LOG.info("agent tools changed: added %s, dropped %s", added, dropped)


def watch_sources(agent: Agent, items: Sequence[object]) -> None:
    """Register a :class:`ToolRefresh` on ``agent`` when one of its sources can change."""
    if any(changes(s) for s in agent.tool_sources):
        agent.hooks.add_provider(ToolRefresh(items, agent.tools))
