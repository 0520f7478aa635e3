"""A caller-owned AGENT-HOOKS session serves a point emitted outside an invocation
(``tether policy check`` emits BeforeToolCall alone); without one nothing is judged."""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall
from tether.control.agent_hooks import AgentHooksHost
from tether.messages import ToolCall
from tether.models import ScriptedModel


@tool
def wipe() -> str:
    """Wipe."""
    return "wiped"


def deny_tools(ctx: dict[str, Any]) -> dict[str, Any]:
    if ctx["interception_point"] == "pre_tool_call":
        return {"decision": "deny", "reason": "p:no-tools"}
    return {"decision": "allow"}


async def test_a_caller_owned_session_judges_a_point_outside_a_run() -> None:
    records: list[Any] = []
    host = AgentHooksHost([deny_tools], record_sink=records.append)
    agent = Agent(model=ScriptedModel([]), tools=[wipe], agent_hooks=host)

    def emitted() -> BeforeToolCall:
        return BeforeToolCall(agent, ToolCall("c1", "wipe", {}), agent.tool_map["wipe"])

    outside = await agent.runtime.hooks.emit(emitted())
    assert outside.cancel_tool is False  # no AGENT-HOOKS session: nothing to judge in
    await host.start_session(agent)
    judged = await agent.runtime.hooks.emit(emitted())
    assert judged.cancel_tool == "denied by AGENT-HOOKS at pre_tool_call: p:no-tools"
    await host.end_session()
    after = await agent.runtime.hooks.emit(emitted())
    assert after.cancel_tool is False
    points = [r.interception_point.value for r in records]
    assert points == ["agent_startup", "pre_tool_call", "agent_shutdown"]
