"""Running one batch of tool calls: name repair, groups and concurrency, cancel, and the
live events tools emit while they run (tools/channel.py); each call: toolcall.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable, Sequence

from tether.control.interrupts import InterruptSignal
from tether.events import StreamEvent, ToolFinished, ToolStarted
from tether.messages import ToolCall, ToolResult
from tether.run_state import RunState
from tether.toolcall import error_result, process_call
from tether.tools.base import Tool
from tether.tools.channel import Outlet, ToolChannel
from tether.tools.planner import plan_batches
from tether.tools.repair import repair_tool_name


def repair_names(run: RunState, calls: Sequence[ToolCall]) -> int:
    """Fix near-miss tool names in place; return how many names stay unknown."""
    tools = run.runtime.toolset.by_name
    unknown = 0
    for call in calls:
        if call.name in tools:
            continue
        fixed = repair_tool_name(call.name, tools)
        if fixed is None:
            unknown += 1
        else:
            call.name = fixed
    return unknown


async def run_batch(
    run: RunState,
    calls: Sequence[ToolCall],
    argument_errors: dict[str, str],
    results: list[ToolResult | None],
) -> AsyncGenerator[StreamEvent, None]:
    """Run the ``calls`` that have no result yet, group by group, filling ``results``
    in the model's call order. An interrupted call keeps ``None`` (it re-runs on resume)."""
    tools = run.runtime.toolset.by_name
    todo = [i for i, r in enumerate(results) if r is None and calls[i].id not in run.held]
    if len(todo) == len(calls):
        groups = [[0]] if len(calls) == 1 else plan_batches(calls, tools)
    else:  # resuming: plan only what is left, keeping the original indices
        left = [calls[i] for i in todo]
        groups = [[todo[j] for j in group] for group in plan_batches(left, tools)]
    for group in groups:
        if run.paused or run.blocked is not None:
            return
        if len(group) == 1:
            index = group[0]
            call = calls[index]
            tool = tools.get(call.name)
            if tool is None or not (tool.takes_context and run.watched):  # inline, no channel
                yield ToolStarted(call)
                result = await _process(run, call, argument_errors.get(call.id))
                if result is not None:
                    results[index] = result
                    if run.journal is not None:
                        await run.journal.tool_result(result, last=None not in results)
                    yield ToolFinished(call, result)
                continue
        live = run.watched and any(_emits(tools.get(calls[i].name)) for i in group)
        async for event in _run_tasks(run, calls, group, argument_errors, results, live):
            yield event


class _Escaped:
    """A KeyboardInterrupt or SystemExit from a call's task. asyncio would re-raise it out
    of the event loop, past the stream's cleanup; the batch re-raises it in the stream."""

    __slots__ = ("error",)

    def __init__(self, error: KeyboardInterrupt | SystemExit) -> None:
        self.error = error


def _emits(tool: Tool | None) -> bool:
    """Whether a call of ``tool`` may put events into the stream while it runs."""
    return tool is not None and tool.takes_context


async def _run_tasks(
    run: RunState,
    calls: Sequence[ToolCall],
    group: list[int],
    argument_errors: dict[str, str],
    results: list[ToolResult | None],
    live: bool,
) -> AsyncGenerator[StreamEvent, None]:
    """Run a group's calls as tasks (concurrently). ``live``: some tool may emit events;
    they go through a ToolChannel and are yielded as they come, each call's before its
    ``ToolFinished`` and none after it (see tools/channel.py)."""
    limit = run.runtime.execution.max_concurrency
    gate = asyncio.Semaphore(limit) if len(group) > limit else None
    channel: ToolChannel | None = None
    outlets: dict[asyncio.Task[ToolResult | _Escaped | None], Outlet] = {}
    if live:
        channel = ToolChannel()
        run.outlets = outlets  # read by _invoke, by the running task

    async def one(call: ToolCall) -> ToolResult | _Escaped | None:
        try:
            if gate is None:
                return await _process(run, call, argument_errors.get(call.id))
            async with gate:
                return await _process(run, call, argument_errors.get(call.id))
        except (KeyboardInterrupt, SystemExit) as exc:
            return _Escaped(exc)  # re-raised by the batch, as an inline call would raise it
        finally:
            if channel is not None:  # wake the batch now, not a loop turn later
                channel.ended()

    pending: dict[asyncio.Task[ToolResult | _Escaped | None], int] = {}
    for index in group:
        yield ToolStarted(calls[index])
        task = asyncio.ensure_future(one(calls[index]))
        pending[task] = index
        run.tasks.add(task)
        if channel is not None:
            outlets[task] = channel.outlet(calls[index])
            channel.watch(task)
    try:
        while pending:
            done: Iterable[asyncio.Task[ToolResult | _Escaped | None]]
            if channel is None:
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            else:
                await channel.wait()
                for event in channel.drain():
                    yield event
                done = [t for t in pending if t.done()]  # in the group's order
            for task in done:
                index = pending.pop(task)
                run.tasks.discard(task)
                call = calls[index]
                result: ToolResult | None
                if task.cancelled():
                    result = error_result(call, "Cancelled: the run was cancelled", "cancelled")
                else:
                    error = task.exception()
                    if error is not None:
                        raise error
                    value = task.result()
                    if isinstance(value, _Escaped):
                        raise value.error
                    result = value
                if channel is not None:  # the call's last events, then nothing more of it
                    for event in channel.close(outlets[task]):
                        yield event
                if result is None:  # interrupted: re-runs on resume
                    continue
                results[index] = result
                if run.journal is not None:
                    await run.journal.tool_result(result, last=None not in results)
                yield ToolFinished(call, result)
    finally:
        if channel is not None:
            channel.shut(list(outlets.values()))
            run.outlets = None
        for task in pending:
            task.cancel()
            run.tasks.discard(task)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


async def _process(run: RunState, call: ToolCall, argument_error: str | None) -> ToolResult | None:
    """The result of one call, or None when it raised an interrupt (recorded on the run)."""
    try:
        return await process_call(run, call, argument_error)
    except InterruptSignal as signal:
        run.interrupts.extend(signal.interrupts)
        return None
