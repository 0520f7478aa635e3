"""A Confirm asked: the ``confirm`` callback answers, or the run suspends as an interrupt."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from tether.control.interrupts import ConfirmDecision
from tether.control.interventions.handler import ConfirmRequest, InterventionHandler, Point
from tether.messages import ToolCall

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef


async def confirm(
    point: Point, event: Any, handler: InterventionHandler, prompt: str
) -> str | None:
    """None when confirmed, else the reason for the refusal.

    With ``Agent(confirm=...)`` the callback answers. Without one, a Confirm before
    a tool or model call suspends the run as an interrupt (answered with
    ``agent.resume``); at other points nobody can answer, so it fails closed.
    """
    agent: AgentRef = event.agent
    refused = f"not confirmed ({handler.label}: {prompt})"
    if agent.runtime.confirm is None:
        if point not in ("before_tool_call", "before_model_call"):
            return f"{refused}: no confirm callback is configured (Agent(confirm=...))"
        # The question records the call as it stands here, after every policy ahead of
        # this Confirm: what the approver sees (and edits) is what will run.
        answer = event.interrupter(
            f"confirm:{handler.label}",
            prompt,
            "intervention",
            tool_call=getattr(event, "tool_call", None),
        )
        decision = ConfirmDecision.parse(answer)
        if not decision.approved:
            return f"{refused}: {decision.reason or 'the approver said no'}"
        if decision.args is not None and point == "before_tool_call":
            call: ToolCall = event.tool_call
            event.tool_call = ToolCall(call.id, call.name, dict(decision.args))
        if point == "before_tool_call":
            event.mark_approved(event.tool_call)
        return None
    request = ConfirmRequest(prompt, handler.label, point, agent, getattr(event, "tool_call", None))
    if inspect.iscoroutinefunction(agent.runtime.confirm):
        answer = await agent.runtime.confirm(request)
    else:
        answer = await asyncio.to_thread(agent.runtime.confirm, request)
        if inspect.isawaitable(answer):
            answer = await answer
    if answer is not True:
        return f"{refused}: the approver said no"
    if point == "before_tool_call":
        event.mark_approved(event.tool_call)
    return None
