"""The AGENT-HOOKS points of one invocation: each tether hook event translated into an
emission on its session's context builder, and the verdict written back (a deny blocks
or refuses, a transform replaces what the loop then uses)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from agent_hooks import AgentContext, AgentContextBuilder, InterceptionRecord

from tether.control.agent_hooks import translate as wire
from tether.control.agent_hooks.durable import CURRENT_EVENT
from tether.control.agent_hooks.interceptors import Context
from tether.messages import ToolResult

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.events import (
        AfterModelCall,
        AfterToolCall,
        BeforeInvocation,
        BeforeModelCall,
        BeforeOutput,
        BeforeToolCall,
    )

Emit: TypeAlias = Callable[[AgentContext], Awaitable[InterceptionRecord]]
"""The host's emission of one context (a transform is written into ``ctx["target"]``)."""

_SUMMARY = {"end_turn": "completed", "error": "error", "blocked": "error", "cancelled": "cancelled"}


@dataclass(slots=True)
class HookSession:
    """One AGENT-HOOKS session: the context builder (sequence, envelope) and its bookkeeping."""

    builder: AgentContextBuilder
    owned: bool = False
    blocked: str | None = None
    denied: set[str] = field(default_factory=set)
    """Tool calls denied before they ran (no post_tool_call for them)."""

    @classmethod
    def open(cls, agent: AgentRef, owned: bool) -> HookSession:
        """A new session for ``agent`` (``owned``: the caller ends it)."""
        builder = AgentContextBuilder(
            agent_id=agent.name or "tether",
            framework="tether",
            session_id=f"{agent.session_id}.{os.urandom(6).hex()}",
        )
        return cls(builder, owned)


async def startup(session: HookSession, emit: Emit, agent: AgentRef) -> InterceptionRecord:
    """agent_startup; a deny blocks every invocation of the session."""
    ctx = Context(
        session.builder.agent_startup(tools_registered=sorted(agent.runtime.toolset.by_name))
    )
    record = await emit(ctx)
    if not record.proceeds:
        session.blocked = _reason(record)
    return record


async def inputs(session: HookSession, emit: Emit, event: BeforeInvocation) -> None:
    """input, once per message of the invocation."""
    if session.blocked is not None:
        event.block = session.blocked
    if event.block:
        return
    changed = False
    messages = []
    for message in event.messages:
        ctx = Context(session.builder.input(content=wire.text_of(message), role=message.role))
        target = ctx["target"]
        record = await emit(ctx)
        if not record.proceeds:
            event.block = _reason(record)
            return
        if _changed(ctx, target):
            try:
                message = wire.input_back(message, ctx["target"])
            except wire.WriteBackError as exc:
                event.block = _unwritable("input", exc)
                return
            changed = True
        messages.append(message)
    if changed:
        event.messages = messages


async def pre_model_call(
    session: HookSession, emit: Emit, cache: wire.WireCache, event: BeforeModelCall
) -> None:
    """pre_model_call on the messages the model is sent (their wire form cached)."""
    if event.block:
        return
    ctx = Context(
        session.builder.pre_model_call(
            model_id=event.agent.runtime.model.name, messages=cache.of(event.messages)
        )
    )
    target = ctx["target"]
    token = CURRENT_EVENT.set(event)
    try:
        record = await emit(ctx)
    finally:
        CURRENT_EVENT.reset(token)
    if not record.proceeds:
        event.block = _reason(record)
    elif _changed(ctx, target):
        try:
            event.messages = wire.messages_back(event.messages, ctx["target"])
        except wire.WriteBackError as exc:
            event.block = _unwritable("pre_model_call", exc)


async def post_model_call(session: HookSession, emit: Emit, event: AfterModelCall) -> None:
    """post_model_call on the reply (not on a failed call or one to be retried)."""
    response = event.response
    if response is None or event.block or event.retry:
        return
    projected = wire.response_wire(response)
    ctx = Context(
        session.builder.post_model_call(
            model_id=event.agent.runtime.model.name,
            content=projected["content"],
            tool_calls=projected["tool_calls"],
            finish_reason=projected["finish_reason"],
        )
    )
    target = ctx["target"]
    record = await emit(ctx)
    if not record.proceeds:
        event.block = _reason(record)
    elif _changed(ctx, target):
        try:
            event.response = wire.response_back(response, ctx["target"])
        except wire.WriteBackError as exc:
            event.block = _unwritable("post_model_call", exc)


async def pre_tool_call(
    session: HookSession, emit: Emit, event: BeforeToolCall, posture: str
) -> None:
    """pre_tool_call; ``posture`` is the host's ``tool_seam_host_error``."""
    call = event.tool_call
    if event.cancel_tool:  # another control refused it: it will not run
        session.denied.add(call.id)
        return
    ctx = Context(
        session.builder.pre_tool_call(call_id=call.id, name=call.name, args=dict(call.arguments))
    )
    target = ctx["target"]
    token = CURRENT_EVENT.set(event)
    try:
        record = await emit(ctx)
    finally:
        CURRENT_EVENT.reset(token)
    if not record.proceeds:
        session.denied.add(call.id)
        _refuse_call(event, _reason(record), _host_error(record), posture)
    elif _changed(ctx, target):
        try:
            event.tool_call = wire.args_back(call, ctx["target"])
        except wire.WriteBackError as exc:
            session.denied.add(call.id)
            _refuse_call(event, _unwritable("pre_tool_call", exc), True, posture)


def _refuse_call(event: BeforeToolCall, reason: str, host_error: bool, posture: str) -> None:
    """Deny the call; a host error under the ``terminate`` posture also stops the run."""
    if host_error and posture == "terminate":
        event.block = reason
    else:
        event.cancel_tool = reason


async def post_tool_call(
    session: HookSession, emit: Emit, event: AfterToolCall, posture: str
) -> None:
    """post_tool_call, except for a call denied before it ran."""
    call = event.tool_call
    if event.retry:
        return
    if call.id in session.denied:
        session.denied.discard(call.id)
        return
    result = event.result
    ctx = Context(
        session.builder.post_tool_call(
            call_id=call.id,
            name=call.name,
            args=dict(call.arguments),
            value=wire.result_value(result),
            is_error=result.is_error,
        )
    )
    target = ctx["target"]
    record = await emit(ctx)
    if not record.proceeds:
        _refuse_result(event, _reason(record), _host_error(record), posture)
    elif _changed(ctx, target):
        try:
            event.result = wire.result_back(result, ctx["target"])
        except wire.WriteBackError as exc:
            _refuse_result(event, _unwritable("post_tool_call", exc), True, posture)


def _refuse_result(event: AfterToolCall, reason: str, host_error: bool, posture: str) -> None:
    """Replace the result; a host error under ``terminate`` also stops the run."""
    event.result = _denied(event.result, reason)
    if host_error and posture == "terminate":
        event.block = reason


async def output(session: HookSession, emit: Emit, event: BeforeOutput) -> None:
    """output on the final answer before it is released."""
    if event.block:
        return
    ctx = Context(session.builder.output(content=wire.text_of(event.message)))
    target = ctx["target"]
    record = await emit(ctx)
    if not record.proceeds:
        event.block = _reason(record)
    elif _changed(ctx, target):
        try:
            event.message = wire.output_back(event.message, ctx["target"])
        except wire.WriteBackError as exc:
            event.block = _unwritable("output", exc)


async def shutdown(session: HookSession, emit: Emit, stop: str) -> None:
    """agent_shutdown at the end of an invocation that opened its own session."""
    reason = _SUMMARY.get(stop, "completed")
    await emit(Context(session.builder.agent_shutdown(reason=reason, stop_reason=stop)))


def _changed(ctx: AgentContext, before: Any) -> bool:
    """Whether the emission wrote a transformed target into ``ctx``."""
    after = ctx.get("target")
    return after is not before and after != before


def _host_error(record: InterceptionRecord) -> bool:
    """The deny is the host's own (``host_error:*``: an interceptor failed, timed out, ...)."""
    return (record.verdict.reason or "").startswith("host_error:")


def _reason(record: InterceptionRecord) -> str:
    """The policy reason for a deny (never the payload it was about)."""
    verdict = record.verdict
    return (
        f"denied by AGENT-HOOKS at {record.interception_point.value}: "
        f"{verdict.reason or 'no reason given'}"
    )


def _unwritable(point: str, exc: Exception) -> str:
    return (
        f"denied by AGENT-HOOKS at {point}: the transform cannot be applied ({exc}); failing closed"
    )


def _denied(result: ToolResult, reason: str) -> ToolResult:
    return ToolResult(result.tool_call_id, result.name, f"Denied: {reason}", True, "denied")
