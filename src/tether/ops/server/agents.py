"""The ``--app`` factory's agents, built once per session and kept.

The server needs a session's Agent for two things only: its custom redactor (session and
timeline views) and its tool schemas (validating an edited decision). Neither runs the
agent, so one Agent per session serves every request: the factory is called
(``AppFactory.build``: a workflow serves as its ``wf.agent``) the first time a session
needs one (in a thread: a factory may block), concurrent requests for the same session
share that one call, the :data:`MAX_AGENTS` most recently used agents are
kept, and an agent is closed (``Agent.close``: its MCP connections and tool threads) when
it is dropped and when the server stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Final

from tether.ops.app_loader import AppFactory, Factory

if TYPE_CHECKING:
    from tether.agent import Agent

log = logging.getLogger("tether.server")

MAX_AGENTS: Final = 64
"""Agents kept at once; the least recently used one beyond this is closed."""


class SessionAgents:
    """``await agents.get(session_id)``: the session's Agent, built by the factory once."""

    def __init__(self, factory: Factory, *, size: int = MAX_AGENTS) -> None:
        self._factory = AppFactory.of(factory)
        self._size = max(1, size)
        self._kept: OrderedDict[str, Agent] = OrderedDict()
        self._building: dict[str, asyncio.Task[Agent]] = {}
        self._closed = False
        self.built = 0
        """Agents the factory returned (each one closed when dropped or at shutdown)."""

    async def get(self, session_id: str) -> Agent:
        """The kept agent of ``session_id``, else one built now; the factory's exception
        if it fails (nothing is kept then: the next request calls it again)."""
        if self._closed:
            raise RuntimeError("the server is stopping: no agent is built any more")
        agent = self._kept.get(session_id)
        if agent is not None:
            self._kept.move_to_end(session_id)
            return agent
        task = self._building.get(session_id)
        if task is None:
            # a task of its own: a request cancelled while the factory runs leaves the
            # agent to be kept (and closed later), never lost unclosed
            task = asyncio.ensure_future(self._build(session_id))
            task.add_done_callback(_retrieved)  # a failure with no request left waiting
            self._building[session_id] = task
        return await asyncio.shield(task)

    async def _build(self, session_id: str) -> Agent:
        try:
            agent = await asyncio.to_thread(self._factory.build, session_id)
        finally:
            self._building.pop(session_id, None)
        self.built += 1
        if self._closed:
            await asyncio.to_thread(_close, agent, session_id)
            return agent
        self._kept[session_id] = agent
        while len(self._kept) > self._size:
            old_id, old = self._kept.popitem(last=False)
            await asyncio.to_thread(_close, old, old_id)
        return agent

    async def close(self) -> None:
        """Close every kept agent, after the ones being built (called on shutdown)."""
        self._closed = True
        building = list(self._building.values())
        if building:
            await asyncio.gather(*building, return_exceptions=True)
        kept = list(self._kept.items())
        self._kept.clear()
        for session_id, agent in kept:
            await asyncio.to_thread(_close, agent, session_id)


def _close(agent: Agent, session_id: str) -> None:
    try:
        agent.close()
    except Exception as exc:  # the app's tool sources: log, and close the others
        log.error("closing the agent of session %s failed: %r", session_id, exc)


def _retrieved(task: asyncio.Task[Agent]) -> None:
    if not task.cancelled():
        task.exception()
