"""The activities of :class:`~tether.temporal.TetherPlugin`: store calls, model calls and
tool calls, each made with the worker's own agent (built by the app's factory per session,
kept like ``tether serve`` keeps them) and the worker's real store."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from tether.errors import ConfigurationError, TetherError
from tether.governance.masks import redact_text
from tether.ops.app_loader import AppFactory
from tether.ops.server.agents import SessionAgents
from tether.temporal.model_proxy import MODEL_ACTIVITY, provider_error_data
from tether.temporal.store_ops import run_store_call
from tether.temporal.store_proxy import STORE_ACTIVITY
from tether.temporal.tool_proxy import TOOL_ACTIVITY, spec_of
from tether.temporal.tree import DESCRIBE_ACTIVITY, agent_at, source_tools
from tether.temporal.wire import decode, encode
from tether.tools.media import ToolOutput

HEARTBEAT_EVERY = 2.0
"""Seconds between a running tool's heartbeats (its timeout is five times longer)."""


class TetherActivities:
    """One per worker: the store and the factory's agents, shared by its activities."""

    def __init__(self, factory: AppFactory, store: Any) -> None:
        self.store = store
        self.agents = SessionAgents(factory)

    def all(self) -> list[Any]:
        """The activity functions to register."""
        return [self.store_call, self.model_call, self.tool_call, self.describe]

    @activity.defn(name=DESCRIBE_ACTIVITY)
    async def describe(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """The tools the agent's sources (MCP servers) offer, connected here, in a thread."""
        agent = await self._agent(payload)
        try:
            tools = await asyncio.to_thread(source_tools, agent)
        except TetherError as exc:
            raise ApplicationError(
                redact_text(str(exc)), type="SourceError", non_retryable=False
            ) from None
        return [spec_of(tool) for tool in tools]

    @activity.defn(name=STORE_ACTIVITY)
    async def store_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One store call of a workflow's agent (see :mod:`tether.temporal.store_ops`)."""
        return await run_store_call(self.store, activity.info().workflow_id or "", payload)

    @activity.defn(name=MODEL_ACTIVITY)
    async def model_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One model call: the worker's agent's model streams; its events go back whole."""
        from tether.governance.masks import redact_text
        from tether.models.failover import ProviderError

        agent = await self._agent(payload)
        request = decode(payload["request"])
        events: list[Any] = []
        try:
            async for event in agent.runtime.model.stream(request):
                events.append(event)
        except ProviderError as exc:  # into the history: through the redaction, as any view
            data = provider_error_data(exc)
            data["detail"] = redact_text(str(data["detail"]))
            raise ApplicationError(
                redact_text(str(exc)), data, type="ProviderError", non_retryable=True
            ) from None
        return {"events": encode(events)}

    @activity.defn(name=TOOL_ACTIVITY)
    async def tool_call(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One tool body, with the arguments the workflow's loop let through. Heartbeats
        while it runs, so a lost worker is noticed within the heartbeat timeout."""
        agent = await self._agent(payload)
        call = decode(payload["call"])
        # a source's tool may need its first listing: blocking, so off the loop
        tool = await asyncio.to_thread(agent.runtime.toolset.by_name.get, call.name)
        if tool is None:
            raise ApplicationError(
                f"the worker's agent has no tool {call.name!r}",
                type="ToolNotFound",
                non_retryable=True,
            )
        beating = asyncio.ensure_future(_heartbeat())
        try:
            if tool.untrusted_schema:  # an outside schema (MCP): checked off the loop
                kwargs = await asyncio.to_thread(tool.prepare, call.arguments)
            else:
                kwargs = tool.prepare(call.arguments)
            value = await tool.invoke(kwargs, None, agent.runtime.threads.get())
        except TimeoutError:
            return {"timeout": True}
        except Exception as exc:
            return {"raised": {"type": type(exc).__name__, "message": str(exc)}}
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
        return {"value": encode(_plain(value))}

    async def _agent(self, payload: dict[str, Any]) -> Any:
        session_id = payload.get("session_id")
        if not isinstance(session_id, str):
            raise ApplicationError("no session id", type="BadPayload", non_retryable=True)
        path = payload.get("path") or []
        try:
            return agent_at(await self.agents.get(session_id), [str(p) for p in path])
        except (ConfigurationError, TetherError) as exc:
            raise ApplicationError(str(exc), type="AppError", non_retryable=True) from None

    async def close(self) -> None:
        """Close the kept agents (their MCP connections and tool threads)."""
        await self.agents.close()


def _plain(value: Any) -> Any:
    """A tool's value as the model's text, or text and images (what crosses back)."""
    from tether.tools.output import format_tool_output

    if type(value) is ToolOutput:
        return {"text": value.text, "images": list(value.images)}
    return format_tool_output(value)


async def _heartbeat() -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(HEARTBEAT_EVERY)
