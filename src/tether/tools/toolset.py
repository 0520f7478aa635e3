"""Toolset: an agent's tools, their name map and the specs a model call sends, kept in step.

Built once from the items of ``tools=[...]`` (functions, Tools, tool sources such as MCP
servers). A source that can change (an MCP server after ``tools/list_changed``) has an
int ``generation`` that grows when the set of tools it offers changes, and ``offered()``
returning those tools without any I/O. A toolset holding such a source registers its
refresh hooks (:meth:`Toolset.register_hooks`): before each model call it compares
generations and, when one moved, rebuilds its three views in one place, so the call
about to be made already sends the new specs. A toolset without a changing source
registers nothing.

Such a source is not asked for its tools when the toolset is built (an MCP server starts
no process for an agent built to validate an edit or show a session): a source with
``listed`` False is listed when a run starts (in a worker thread, off the loop), or,
outside a run, when a lookup in :attr:`Toolset.by_name` misses (validating an edited
call, say: the tool is needed then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tether.context.estimate import forget_fixed
from tether.control.events import BeforeInvocation, BeforeModelCall
from tether.control.registry import HookOrder, HookRegistry
from tether.errors import ConfigurationError, HookError, TetherError
from tether.tools.base import Tool
from tether.tools.source import (
    ToolItem,
    ToolSource,
    expand_tools,
    is_tool_source,
    tool_sources,
    tools_of,
)

_LOG = logging.getLogger("tether.tools")


class Toolset:
    """An agent's tools (:attr:`tools`), the same by name (:attr:`by_name`) and the specs
    a model call sends (:attr:`specs`); refreshed together when a source's tools change."""

    __slots__ = ("_refresh", "by_name", "items", "sources", "specs", "tools")

    def __init__(self, items: Iterable[ToolItem]) -> None:
        self.items: tuple[ToolItem, ...] = tuple(items)
        """What ``tools=[...]`` was given (a clone builds its toolset from the same items)."""
        # names are unique, or it raises; an MCP server connects when a run needs it
        self.tools: list[Tool] = expand_tools(self.items, connect=False)
        self.sources: list[ToolSource] = tool_sources(self.items)
        """Sources of several tools (e.g. MCP servers), closed by :meth:`close`."""
        self.specs: list[dict[str, Any]] = [t.spec() for t in self.tools]
        self._refresh: ToolRefresh | None = None
        self.by_name: dict[str, Tool] = {t.name: t for t in self.tools}
        if any(changes(s) for s in self.sources):
            refresh = self._refresh = ToolRefresh(self, self.items)
            self.by_name = ToolMap(self.by_name.items(), refresh.load)

    @property
    def changes(self) -> bool:
        """True when a source's tools can change (the toolset then refreshes itself)."""
        return self._refresh is not None

    def register_hooks(self, registry: HookRegistry) -> None:
        """Take up a changing source's tools at run start and at model-call boundaries."""
        if self._refresh is not None:
            self._refresh.register_hooks(registry)

    def replace(self, tools: list[Tool]) -> None:
        """Make ``tools`` the current tools: the three views change together."""
        self.tools[:] = tools
        self.by_name.clear()
        self.by_name.update((t.name, t) for t in tools)
        self.specs[:] = [t.spec() for t in tools]  # the list the model call sends
        forget_fixed(self.specs)  # the context estimate counts the new specs

    def close(self) -> None:
        """Close the tool sources (they stay usable: they reconnect on first use)."""
        for source in self.sources:
            source.close()


def changes(source: object) -> bool:
    """True for a tool source whose tools can change while an agent holds it."""
    return isinstance(getattr(source, "generation", None), int) and callable(
        getattr(source, "offered", None)
    )


class ToolRefresh:
    """Keeps a toolset in step with its changing sources, at model-call boundaries."""

    def __init__(self, toolset: Toolset, items: Sequence[object]) -> None:
        self._toolset = toolset
        tools = toolset.tools
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
        self._take_up()

    def load(self) -> bool:
        """List the sources not listed yet, blocking; False when there were none."""
        waiting = self._unlisted()
        if not waiting and self._taken:
            return False
        for source in waiting:
            source.tools()
        self._take_up()
        return True

    def _take_up(self) -> None:
        seen = [s.generation for s in self._sources]
        self.apply(strict=True)  # raises for a name clash: the next use asks again
        self._seen = seen
        self._taken = True

    def before_model_call(self, event: BeforeModelCall) -> None:
        now = [s.generation for s in self._sources]
        if now != self._seen:
            self._seen = now
            self.apply()

    def apply(self, *, strict: bool = False) -> None:
        """Rebuild the toolset's tools, name map and specs in place from the sources.

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
        before = set(self._toolset.by_name)
        self._toolset.replace(tools)
        added, dropped = sorted(set(names) - before), sorted(before - set(names))
        if added or dropped:
            _LOG.info("agent tools changed: added %s, dropped %s", added, dropped)


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
