"""Running one batch of tool calls: name repair, hooks, middleware, concurrency, cancel,
and the live events tools emit while they run (tools/channel.py)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncGenerator, Iterable, Sequence
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.control.events import AfterToolCall, BeforeToolCall
from tether.control.interrupts import Interrupter, InterruptSignal
from tether.control.middleware import ToolRequest
from tether.errors import MiddlewareError, RetryLimitError, ToolArgumentError
from tether.events import StreamEvent, ToolFinished, ToolStarted
from tether.messages import ToolCall, ToolResult
from tether.run_state import RunState
from tether.tools.base import Tool
from tether.tools.channel import Outlet, ToolChannel
from tether.tools.context import ToolContext
from tether.tools.media import ToolOutput
from tether.tools.output import format_tool_output
from tether.tools.planner import plan_batches
from tether.tools.repair import describe_available, repair_tool_name

if TYPE_CHECKING:
    pass


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


def _error(call: ToolCall, text: str, status: str = "error") -> ToolResult:
    return ToolResult(call.id, call.name, text, is_error=True, status=status)


async def run_batch(
    run: RunState,
    calls: Sequence[ToolCall],
    argument_errors: dict[str, str],
    results: list[ToolResult | None],
) -> AsyncGenerator[StreamEvent, None]:
    """Run the ``calls`` that have no result yet, group by group, filling ``results``
    in the model's call order. An interrupted call keeps ``None`` (it re-runs on resume)."""
    tools = run.runtime.toolset.by_name
    todo = [i for i, r in enumerate(results) if r is None]
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
                    result = _error(call, "Cancelled: the run was cancelled", "cancelled")
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
        return await _process_call(run, call, argument_error)
    except InterruptSignal as signal:
        run.interrupts.extend(signal.interrupts)
        return None


@dataclass(frozen=True, slots=True)
class _Origin:
    """The model's call, and who changed it before it reached the tool (see _ran)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    by: tuple[str, ...]
    hooked: ToolCall
    """The call as the BeforeToolCall hooks left it (tool middleware may change it too)."""


_ORIGIN: ContextVar[_Origin | None] = ContextVar("tether_tool_origin", default=None)
"""The current call's _Origin, for _invoke's intent (set per call, in its own task)."""


def _changed_by(model: dict[str, Any], before: BeforeToolCall, call: ToolCall) -> tuple[str, ...]:
    """Who changed the model's arguments ``model`` into ``call``'s, in order: each policy
    Transform (``transform:LABEL``), an approver's ``edit``, any other ``hook``."""
    by: list[str] = []
    now = model
    for label, made in before.transformed:
        if made.arguments != now:
            by.append(f"transform:{label}")
            now = made.arguments
    approved = before.approved
    if approved is not None and approved.arguments != now:
        by.append("edit")
        now = approved.arguments
    if call.arguments != now:
        by.append("hook")
    return tuple(by)


async def _process_call(run: RunState, call: ToolCall, argument_error: str | None) -> ToolResult:
    agent = run.agent
    hooks = run.runtime.hooks
    tool = run.runtime.toolset.by_name.get(call.name)
    denied: ToolResult | None = None
    origin: _Origin | None = None
    if hooks.has(BeforeToolCall):
        interrupter = Interrupter(
            run.answers,
            "before_tool_call",
            run.batch_position,
            "hook",
            call,
            session=agent.session_id,
        )
        journaled = run.journal is not None  # the ran record is for the journal only
        model = copy.deepcopy(call.arguments) if journaled else {}  # a hook may edit in place
        model_name, model_id = call.name, call.id
        before = await hooks.emit(BeforeToolCall(agent, call, tool, interrupter=interrupter))
        call, tool = before.tool_call, before.selected_tool
        if journaled:
            origin = _Origin(model_id, model_name, model, _changed_by(model, before, call), call)
        if before.block:
            run.blocked = run.blocked or before.block
            denied = _error(call, f"Denied: {before.block}", "denied")
        elif before.cancel_tool:
            reason = before.cancel_tool
            text = reason if isinstance(reason, str) else "the tool call was cancelled by a hook"
            denied = _error(call, f"Denied: {text}", "denied")
        elif before.approved is not None:
            denied = _unless_as_approved(run, before.approved, call, tool)
    elif run.tool_onion is not None and run.journal is not None:
        origin = _Origin(call.id, call.name, copy.deepcopy(call.arguments), (), call)
    _ORIGIN.set(origin)  # this call's task (or the batch's, inline: set for every call)
    attempt = 0
    while True:
        attempt += 1
        exc: BaseException | None = None
        if denied is not None:
            result = denied
        else:
            result, exc = await _execute(run, call, tool, argument_error)
        if not hooks.has(AfterToolCall):
            return result
        after = await hooks.emit(AfterToolCall(agent, call, tool, result, exc))
        if after.block:
            run.blocked = run.blocked or after.block
            return _error(call, f"Denied: {after.block}", "denied")
        if after.retry and denied is None:
            if attempt > run.runtime.execution.max_retries:
                raise RetryLimitError(
                    f"AfterToolCall hooks asked to retry tool {call.name!r} (call {call.id}) "
                    f"{attempt} times; the limit is {run.runtime.execution.max_retries} (Execution(max_retries=...))."
                )
            continue
        return after.result


def _unless_as_approved(
    run: RunState, approved: ToolCall, call: ToolCall, tool: Tool | None
) -> ToolResult | None:
    """A denied result when a hook changed the call (or the tool) after a human approved it:
    what a human approved is exactly what runs. None when it is unchanged."""
    if (
        call.name == approved.name
        and call.arguments == approved.arguments
        and tool is run.runtime.toolset.by_name.get(approved.name)
    ):
        return None
    ran = tool.name if tool is not None else call.name
    return _error(
        call,
        f"Denied: the call was changed after a human approved it (approved "
        f"{approved.name}({json.dumps(approved.arguments, sort_keys=True, default=str)}), "
        f"then {ran}({json.dumps(call.arguments, sort_keys=True, default=str)})); nothing "
        "ran. A hook that rewrites calls must run before the approval, not after it.",
        "denied",
    )


async def _execute(
    run: RunState, call: ToolCall, tool: Tool | None, argument_error: str | None
) -> tuple[ToolResult, BaseException | None]:
    if argument_error is not None:
        run.invalid_calls += 1
        return _error(call, f"Error: tool {call.name!r}: {argument_error}"), None
    if tool is None:
        return _error(
            call, f"Error: {describe_available(call.name, run.runtime.toolset.by_name)}"
        ), None
    if run.cancel.cancelled:
        return _error(call, "Cancelled: the run was cancelled", "cancelled"), None
    onion = run.tool_onion
    if onion is None:
        return await _invoke(run, call, tool)
    request = await onion.prepare(ToolRequest(call, tool))
    last: object = None
    async with aclosing(onion.call(request)) as items:
        async for item in items:
            last = item
    if not isinstance(last, ToolResult):
        raise MiddlewareError(
            f"the tool middleware chain for {call.name!r} did not end with a ToolResult "
            f"(last item: {type(last).__name__}); a middleware's wrap() must yield the result last"
        )
    return await onion.finish(last), None


async def invoke_tool(run: RunState, request: ToolRequest) -> AsyncGenerator[ToolResult, None]:
    """The innermost layer of the tool middleware onion."""
    assert request.tool is not None
    result, _ = await _invoke(run, request.call, request.tool)
    yield result


async def _invoke(
    run: RunState, call: ToolCall, tool: Tool
) -> tuple[ToolResult, BaseException | None]:
    try:
        if tool.untrusted_schema:
            kwargs = await asyncio.to_thread(tool.prepare, call.arguments)
        else:
            kwargs = tool.prepare(call.arguments)
    except ToolArgumentError as exc:
        run.invalid_calls += 1
        return _error(call, f"Error: {exc}"), exc
    agent = run.agent
    interrupter = Interrupter(
        run.answers, "tool", run.batch_position, "tool", call, session=agent.session_id
    )
    task = asyncio.current_task()
    outlets = run.outlets  # set while a live group runs: this task's way into the stream
    outlet = outlets.get(task) if outlets is not None and task is not None else None
    context = ToolContext(call, agent, agent.conversation.state, run.cancel, interrupter, outlet)
    if task is not None:
        run.tasks.add(task)
    run.usage.tool_calls += 1
    if run.journal is not None:  # before the side effect; durable unless safe to repeat
        intent: dict[str, Any] = {"call_id": call.id, "name": call.name}
        ran = _ran(call)
        if ran is not None:
            intent["ran"] = ran
        await run.journal.append("tool_intent", intent, durable=not tool.idempotent)
    try:
        value = await tool.invoke(kwargs, context, run.runtime.threads.get())
    except asyncio.CancelledError:
        if not run.cancel.cancelled or task is None:
            raise
        task.uncancel()
        return _error(
            call, "Cancelled: the run was cancelled while the tool ran", "cancelled"
        ), None
    except TimeoutError as exc:
        limit = f" after {tool.timeout:g} s" if tool.timeout is not None else ""
        return _error(call, f"Error: tool {call.name!r} timed out{limit}", "timeout"), exc
    except Exception as exc:
        return _error(call, f"Error: {type(exc).__name__}: {exc}"), exc
    finally:
        if task is not None:
            run.tasks.discard(task)
    if type(value) is ToolOutput:  # text with images (an MCP image result, say)
        return ToolResult(call.id, call.name, value.text, images=value.images), None
    return ToolResult(call.id, call.name, format_tool_output(value)), None


def _ran(call: ToolCall) -> dict[str, Any] | None:
    """The intent's ``ran`` record: the arguments that run and who changed them, when they
    differ from the model's call (None: they do not, or nothing could change them)."""
    origin = _ORIGIN.get()
    if origin is None or origin.call_id != call.id:
        return None
    by = list(origin.by)
    if call.arguments != origin.hooked.arguments or call.name != origin.hooked.name:
        by.append("middleware")
    if call.arguments == origin.arguments and call.name == origin.name:
        return None
    # the intent's name is the tool that runs; a hook that only renamed the call is a hook
    return {"arguments": dict(call.arguments), "by": by or ["hook"]}


def onions(run: RunState) -> None:
    """Build the run's middleware chains: around the runtime's model, and around this
    run's tool invocation."""
    from tether.control.middleware import ModelOnion, ToolOnion
    from tether.modelcall import stream_model

    runtime = run.runtime
    model = runtime.model
    if runtime.model_middleware:
        run.model_onion = ModelOnion(
            runtime.model_middleware, lambda request: stream_model(model, request)
        )
    if runtime.tool_middleware:
        run.tool_onion = ToolOnion(
            runtime.tool_middleware, lambda request: invoke_tool(run, request)
        )
