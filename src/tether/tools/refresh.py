"""Changing tool sources: an agent takes up the tools a source adds or drops at run time.

A source that can change (an MCP server after ``tools/list_changed``) has an int
``generation`` that grows when the set of tools it offers changes, and ``offered()``
returning those tools without any I/O. An Agent holding such a source registers a
:class:`ToolRefresh`; before each model call it compares generations and, when one
moved, rebuilds the agent's tool list in place, so the call about to be made already
sends the new tool specs. Agents without a changing source register nothing.

Such a source is not asked for its tools when the Agent is built (an MCP server starts
no process for an agent built to validate an edit or show a session): a source with
``listed`` False is listed when a run starts (in a worker thread, off the loop), or,
outside a run, when a lookup in ``agent.tool_map`` misses (validating an edited call,
say: the tool is needed then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from tether.context.estimate import forget_fixed
from tether.control.events import BeforeInvocation, BeforeModelCall
from tether.control.registry import HookOrder, HookRegistry
from tether.errors import ConfigurationError, HookError, TetherError
from tether.tools.base import Tool
from tether.tools.source import is_tool_source, tools_of

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
                position += len(tools_of(item, connect=False))  # type: ignore[arg-type]
            else:
                self._parts.append(tools[position])
                position += 1
        self._sources: list[Any] = [p for p in self._parts if changes(p)]
        self._seen = [s.generation for s in self._sources]
        # Every source's first listing went through a strict apply (a name clash raises).
        self._taken = not self._unlisted()

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(BeforeInvocation, self.before_invocation, HookOrder.SDK_FIRST)
        registry.add(BeforeModelCall, self.before_model_call, HookOrder.SDK_FIRST)

    def _unlisted(self) -> list[Any]:
        return [s for s in self._sources if getattr(s, "listed", True) is False]

    async def before_invocation(self, event: BeforeInvocation) -> None:
        """List the sources not listed yet (their first use), in a thread: a server's
        start must not hold the loop."""
        waiting = self._unlisted()
        if not waiting and self._taken:
            return
        for source in waiting:
            try:
                await asyncio.to_thread(source.tools)
            except TetherError as exc:
                raise HookError(
                    f"{source!r} could not give its tools when the run started: {exc}"
                ) from exc
        self._take_up(event.agent)

    def load(self, agent: Agent) -> bool:
        """List the sources not listed yet, blocking; False when there were none."""
        waiting = self._unlisted()
        if not waiting and self._taken:
            return False
        for source in waiting:
            source.tools()
        self._take_up(agent)
        return True

    def _take_up(self, agent: Agent) -> None:
        seen = [s.generation for s in self._sources]
        self.apply(agent, strict=True)  # raises for a name clash: the next use asks again
        self._seen = seen
        self._taken = True

    def before_model_call(self, event: BeforeModelCall) -> None:
        now = [s.generation for s in self._sources]
        if now != self._seen:
            self._seen = now
            self.apply(event.agent)

    def apply(self, agent: Agent, *, strict: bool = False) -> None:
        """Rebuild ``agent.tools``, ``tool_map`` and ``tool_specs`` in place from the sources.

        ``strict`` (a source's first listing, before the run uses any tool): a name two
        items give is a ConfigurationError, as when the Agent is built; otherwise the
        first keeps it, with a warning (a run cannot stop half way for it)."""
        tools: list[Tool] = []
        names: dict[str, str] = {}
        for part in self._parts:
            if isinstance(part, Tool):
                found, where = [part], "the tools list"
            else:
                found = part.offered() if changes(part) else part.tools()
                where = repr(part)
            for tool in found:
                if tool.name in names and strict:
                    raise ConfigurationError(
                        f"two tools are named {tool.name!r}: one from {names[tool.name]}, one "
                        f"from {where}; tool names must be unique: give a source a name prefix "
                        "(e.g. MCPServer.stdio(..., prefix='git_')) or filter it with allow=/deny="
                    )
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
    """Register a :class:`ToolRefresh` on ``agent`` when one of its sources can change,
    and make ``agent.tool_map`` list the sources not listed yet when a lookup misses."""
    if any(changes(s) for s in agent.tool_sources):
        refresh = ToolRefresh(items, agent.tools)
        agent.hooks.add_provider(refresh)
        agent.tool_map = ToolMap(agent.tool_map.items(), lambda: refresh.load(agent))


class ToolMap(dict[str, Tool]):
    """An agent's tools by name; a name not found lists the sources not listed yet
    (``load``) and looks again, so a tool is found wherever it is needed first."""

    def __init__(self, tools: Iterable[tuple[str, Tool]], load: Callable[[], bool]) -> None:
        super().__init__(tools)
        self._load = load

    def _found(self, name: object) -> bool:
        return dict.__contains__(self, name) or (self._load() and dict.__contains__(self, name))

    def __contains__(self, name: object) -> bool:
        return self._found(name)

    def __missing__(self, name: str) -> Tool:
        if self._load() and dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        return dict.__getitem__(self, name) if self._found(name) else default
