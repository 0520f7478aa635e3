"""One tool call: BeforeToolCall / AfterToolCall, the as-approved check, the tool
middleware, the journaled intent, and the tool's invocation (the batch: toolcalls.py)."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from tether.control.events import AfterToolCall, BeforeToolCall
from tether.control.interrupts import Interrupter
from tether.control.middleware import ToolRequest
from tether.errors import MiddlewareError, RetryLimitError, ToolArgumentError
from tether.messages import ToolCall, ToolResult
from tether.run_state import RunState
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.tools.media import ToolOutput
from tether.tools.output import format_tool_output
from tether.tools.repair import describe_available


def error_result(call: ToolCall, text: str, status: str = "error") -> ToolResult:
    return ToolResult(call.id, call.name, text, is_error=True, status=status)


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


async def process_call(run: RunState, call: ToolCall, argument_error: str | None) -> ToolResult:
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
            session=run.session_id,
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
            denied = error_result(call, f"Denied: {before.block}", "denied")
        elif before.cancel_tool:
            reason = before.cancel_tool
            text = reason if isinstance(reason, str) else "the tool call was cancelled by a hook"
            denied = error_result(call, f"Denied: {text}", "denied")
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
            return error_result(call, f"Denied: {after.block}", "denied")
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
    return error_result(
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
        return error_result(call, f"Error: tool {call.name!r}: {argument_error}"), None
    if tool is None:
        return error_result(
            call, f"Error: {describe_available(call.name, run.runtime.toolset.by_name)}"
        ), None
    if run.cancel.cancelled:
        return error_result(call, "Cancelled: the run was cancelled", "cancelled"), None
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
        return error_result(call, f"Error: {exc}"), exc
    agent = run.agent
    interrupter = Interrupter(
        run.answers, "tool", run.batch_position, "tool", call, session=run.session_id
    )
    task = asyncio.current_task()
    outlets = run.outlets  # set while a live group runs: this task's way into the stream
    outlet = outlets.get(task) if outlets is not None and task is not None else None
    context = ToolContext(call, agent, agent.conversation.state, run.cancel, interrupter, outlet)
    run.usage.tool_calls += 1
    if run.journal is not None:  # before the side effect; durable unless safe to repeat
        intent: dict[str, Any] = {"call_id": call.id, "name": call.name}
        ran = _ran(call)
        if ran is not None:
            intent["ran"] = ran
        await run.journal.append("tool_intent", intent, durable=not tool.idempotent)
    # cancellable only now: a cancel() landing during the intent's write must not cancel
    # the write (an inline call runs in the run's own task); it is seen here instead
    if task is not None:
        run.tasks.add(task)
    if run.cancel.cancelled:
        if task is not None:
            run.tasks.discard(task)
        return error_result(call, "Cancelled: the run was cancelled", "cancelled"), None
    try:
        value = await tool.invoke(kwargs, context, run.runtime.threads.get())
    except asyncio.CancelledError:
        if not run.cancel.cancelled or task is None:
            raise
        task.uncancel()
        return error_result(
            call, "Cancelled: the run was cancelled while the tool ran", "cancelled"
        ), None
    except TimeoutError as exc:
        limit = f" after {tool.timeout:g} s" if tool.timeout is not None else ""
        return error_result(call, f"Error: tool {call.name!r} timed out{limit}", "timeout"), exc
    except Exception as exc:
        return error_result(call, f"Error: {type(exc).__name__}: {exc}"), exc
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
