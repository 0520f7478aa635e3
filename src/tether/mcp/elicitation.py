"""Elicitation: a server asks the user for input in the middle of a tool call.

The request arrives in the connection's thread; it is handed to the call in flight,
in the agent's loop, and answered through the control plane there: by the Agent's
``confirm`` callback in process, or else, for an idempotent tool, as an interrupt
(the run suspends, the call is cancelled, and on resume it runs again and gets the
recorded answer). A non-idempotent call cannot be re-run, so without a ``confirm``
callback its elicitation is declined: the server decides what to do without it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types

    from tether.mcp.tool import MCPTool
    from tether.tools.context import ToolContext

_LOG = logging.getLogger("tether.mcp")
Reply = concurrent.futures.Future[Any]


@dataclass(eq=False)
class Asking:
    """One call in flight that may be asked: questions come in on ``queue``."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[tuple[mcp_types.ElicitRequestFormParams, Reply]] = field(
        default_factory=asyncio.Queue
    )
    asked: int = 0


class Elicitations:
    """Routes a server's elicitation requests to the one call in flight."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._lock = threading.Lock()
        self._calls: list[Asking] = []

    def open(self) -> Asking:
        asking = Asking(asyncio.get_running_loop())
        with self._lock:
            self._calls.append(asking)
        return asking

    def close(self, asking: Asking) -> None:
        with self._lock:
            self._calls.remove(asking)

    async def __call__(
        self, context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        """The SDK's elicitation callback (runs in the connection's loop)."""
        from mcp_types import ElicitResult

        with self._lock:
            calls = list(self._calls)
        if params.mode != "form" or len(calls) != 1:
            why = "a URL" if params.mode != "form" else f"{len(calls)} calls in flight"
            _LOG.warning("MCP server %r: elicitation declined (%s)", self.label, why)
            return ElicitResult(action="decline")
        asking = calls[0]
        reply: Reply = concurrent.futures.Future()
        asking.loop.call_soon_threadsafe(asking.queue.put_nowait, (params, reply))
        result: ElicitResult = await asyncio.wrap_future(reply)
        return result


async def ask(
    label: str,
    tool: MCPTool,
    asking: Asking,
    params: mcp_types.ElicitRequestFormParams,
    context: ToolContext | None,
) -> mcp_types.ElicitResult:
    """Answer one elicitation in the caller's loop (may raise InterruptSignal)."""
    from mcp_types import ElicitResult

    from tether.control.interventions import ConfirmRequest

    asking.asked += 1
    if context is None:
        return ElicitResult(action="decline")
    schema: dict[str, Any] = dict(params.requested_schema)
    agent = context.agent
    if agent.runtime.confirm is not None:
        from tether.ops.terminal import visible

        # The server's text goes to a callback that may print it (the README's input()):
        # ESC, bidi and other invisible characters are written as escapes, on one line.
        fields = json.dumps(schema.get("properties", {}), ensure_ascii=False)
        prompt = visible(
            f"MCP server {label!r} asks, during {tool.mcp_name!r}: {params.message} "
            f"(fields: {fields})",
            one_line=True,
        )
        request = ConfirmRequest(
            prompt, "mcp-elicitation", "before_tool_call", agent, context.tool_call
        )
        confirm: Any = agent.runtime.confirm
        if inspect.iscoroutinefunction(confirm):
            answer = await confirm(request)
        else:
            answer = await asyncio.to_thread(confirm, request)
            if inspect.isawaitable(answer):
                answer = await answer
        return result_for(answer)
    if not tool.idempotent:
        return ElicitResult(action="decline")  # a suspend would re-run the call
    answer = context.interrupt(
        f"mcp-elicitation:{asking.asked}",
        {"server": label, "tool": tool.mcp_name, "message": params.message, "schema": schema},
    )
    return result_for(answer)


def result_for(answer: Any) -> mcp_types.ElicitResult:
    """``True`` / a dict of field values accept; ``"cancel"`` cancels; anything else declines."""
    from mcp_types import ElicitResult

    if answer is True:
        return ElicitResult(action="accept", content={})
    if isinstance(answer, dict):
        if answer.get("action") in ("accept", "decline", "cancel"):
            return ElicitResult(action=answer["action"], content=answer.get("content"))
        return ElicitResult(action="accept", content=answer)
    if answer == "cancel":
        return ElicitResult(action="cancel")
    return ElicitResult(action="decline")
