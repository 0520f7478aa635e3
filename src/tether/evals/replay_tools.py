"""The replay's one mechanism in the loop: a tool middleware, innermost, that answers a call
from the recorded journal when the recording ran the same tool with the same arguments
(both coerced by the tool's schema), and otherwise runs nothing (unless live tools are
allowed). The policies, hooks and other middleware ahead of it run as they always do."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.control.middleware import ToolCallNext, ToolItem, ToolMiddleware, ToolRequest
from tether.errors import TetherError
from tether.messages import ToolResult

if TYPE_CHECKING:
    from tether.evals.replay_record import Run
    from tether.tools.base import Tool

NOT_RECORDED = (
    "Error: this is a replay of a recorded session, and the recording has no result for "
    "this call (no call of {tool!r} with these arguments ran then); it was not run."
)
"""The tool error a divergent call gets (without live tools)."""


def coerced(tool: Tool, arguments: dict[str, Any], *, untrusted: bool = False) -> str:
    """The arguments as the tool would run them (validated and coerced by its schema), as
    canonical JSON; the raw arguments when the schema refuses them. A schema from outside
    (an MCP server's) is only applied with ``untrusted`` (the caller is on a worker
    thread): on the event loop its raw arguments are compared."""
    from pydantic_core import to_jsonable_python

    value: Any = arguments
    if untrusted or not tool.untrusted_schema:
        try:
            value = to_jsonable_python(tool.prepare(dict(arguments)), fallback=repr)
        except (TetherError, ValueError, TypeError):
            value = arguments
    return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)


async def coerced_async(tool: Tool, arguments: dict[str, Any]) -> str:
    """:func:`coerced`, an outside schema applied on a worker thread (as the loop does)."""
    if tool.untrusted_schema:
        return await asyncio.to_thread(coerced, tool, arguments, untrusted=True)
    return coerced(tool, arguments)


class ReplayTools(ToolMiddleware):
    """Answers tool calls from a recording's runs, each run at most once, in order.

    ``answered`` (call id -> the recorded call id), ``not_run`` and ``live`` (call ids)
    say what happened to each call that reached it, ``reached`` how it reached it."""

    def __init__(self, runs: Sequence[Run], *, live_tools: bool = False) -> None:
        self.pending: list[Run] = list(runs)
        self.live_tools = live_tools
        self.answered: dict[str, str] = {}
        self.not_run: set[str] = set()
        self.live: set[str] = set()
        self.keys: dict[int, str] = {}  # a recorded run's coerced arguments, by id(run)
        self.reached: dict[str, tuple[str, dict[str, Any]]] = {}
        """Call id -> the tool and arguments that reached the tool (after every rewrite)."""

    async def take(self, tool: Tool, arguments: dict[str, Any]) -> Run | None:
        """The first unused recorded run of ``tool`` with the same coerced arguments."""
        key: str | None = None
        for index, run in enumerate(self.pending):
            if run.tool != tool.name:
                continue
            if key is None:
                key = await coerced_async(tool, arguments)
            if id(run) not in self.keys:
                self.keys[id(run)] = await coerced_async(tool, run.arguments)
            if self.keys[id(run)] == key:
                return self.pending.pop(index)
        return None

    async def wrap(
        self, request: ToolRequest, call_next: ToolCallNext
    ) -> AsyncGenerator[ToolItem, None]:
        call, tool = request.call, request.tool
        self.reached[call.id] = (call.name if tool is None else tool.name, dict(call.arguments))
        run = None if tool is None else await self.take(tool, dict(call.arguments))
        if run is not None:
            self.answered[call.id] = run.call_id
            yield replace(run.result, tool_call_id=call.id, name=call.name)
            return
        if self.live_tools and tool is not None:
            self.live.add(call.id)
            async for item in call_next(request):
                yield item
            return
        self.not_run.add(call.id)
        name = call.name if tool is None else tool.name
        yield ToolResult(
            call.id, call.name, NOT_RECORDED.format(tool=name), is_error=True, status="error"
        )
