"""``tether mcp serve``: a governed agent as one MCP tool, its interrupts asked through elicitation.

The tool (default name ``run_agent``) takes ``prompt`` and an optional ``session_id``;
each call builds the agent with the app's factory (``factory(session_id=...)``), runs
one invocation and returns the final text. When the run suspends on an interrupt (a
Confirm, an in-doubt call, a hook or tool question), each pending question goes to the
MCP host as an elicitation: a Confirm as ``{approve: bool, note: str}``, anything else
as ``{answer: str}`` (JSON if it parses, else the string); the run resumes with the
answers, until it ends. A host that cannot elicit (or declines) gets a text saying the
session is suspended, with its id and the pending questions: with a durable store they
wait in the approvals inbox like any other. Served over stdio.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context  # the SDK reads the tool's annotations at run time

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer as SDKServer

    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.result import Result

_MAX_ROUNDS = 100


def build_server(
    factory: Callable[..., Agent],
    *,
    name: str = "tether",
    tool_name: str = "run_agent",
    description: str | None = None,
) -> SDKServer:
    """An MCP server (the SDK's) offering ``factory``'s agent as the tool ``tool_name``."""
    from mcp.server.mcpserver import MCPServer as SDKServer

    server = SDKServer(name)
    about = description or (
        "Run the agent on a prompt and return its answer. It runs under its own policies: "
        "questions it has for a person (approvals) are asked through elicitation. Pass "
        "session_id to continue a conversation."
    )

    async def run_agent(prompt: str, ctx: Context, session_id: str = "") -> str:
        agent = factory(session_id=session_id or f"mcp-{uuid.uuid4().hex[:12]}")
        try:
            result = await agent.invoke_async(prompt)
            for _ in range(_MAX_ROUNDS):
                if result.stop_reason != "interrupt":
                    break
                answers = await _ask(ctx, agent, result.interrupts)
                if answers is None:
                    return _suspended(agent, result.interrupts)
                result = await agent.resume_async(answers)
            return _answer(result)
        finally:
            agent.close()

    server.add_tool(run_agent, name=tool_name, description=about, structured_output=False)
    return server


async def _ask(ctx: Context, agent: Agent, pending: list[Interrupt]) -> dict[str, Any] | None:
    """The host's answers to every pending interrupt, or None if it cannot or will not say."""
    from mcp_types import ClientCapabilities, ElicitationCapability

    wanted = ClientCapabilities(elicitation=ElicitationCapability())
    if not ctx.session.check_client_capability(wanted):
        return None
    answers: dict[str, Any] = {}
    for interrupt in pending:
        message = _question(agent, interrupt)
        if interrupt.source == "intervention":
            confirm = await ctx.elicit(message, _Confirm)
            if confirm.action != "accept" or confirm.data is None:
                return None
            note = confirm.data.note or None
            answers[interrupt.id] = (
                True if confirm.data.approve else {"approved": False, "reason": note}
            )
        else:
            free = await ctx.elicit(message, _Answer)
            if free.action != "accept" or free.data is None:
                return None
            answers[interrupt.id] = _parsed(free.data.answer)
    return answers


def _question(agent: Agent, interrupt: Interrupt) -> str:
    reason = interrupt.reason
    text = reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)
    call = interrupt.tool_call
    about = "" if call is None else f" (tool {call.name} {json.dumps(call.arguments)})"
    return f"session {agent.session_id}, {interrupt.source} {interrupt.id}{about}: {text}"


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _answer(result: Result) -> str:
    if result.stop_reason == "interrupt":
        return f"the run is still waiting after {_MAX_ROUNDS} rounds of questions"
    text = result.message.text if result.message is not None else ""
    if result.stop_reason == "end_turn":
        return text
    return f"[stopped: {result.stop_reason}] {text}".strip()


def _suspended(agent: Agent, pending: list[Interrupt]) -> str:
    lines = [
        f"session {agent.session_id} is suspended, waiting for a person to answer "
        f"{len(pending)} question(s); the MCP host did not answer them (no elicitation). "
        "With a durable store they wait in the approvals inbox (tether approvals list):"
    ]
    lines += [f"- {_question(agent, i)}" for i in pending]
    return "\n".join(lines)


def _schemas() -> tuple[type[Any], type[Any]]:
    from pydantic import BaseModel, Field

    class Confirm(BaseModel):
        approve: bool = Field(description="Let the agent go ahead")
        note: str = Field("", description="Why (shown to the agent when you refuse)")

    class Answer(BaseModel):
        answer: str = Field(description="Your answer (JSON, or plain text)")

    return Confirm, Answer


_Confirm, _Answer = _schemas()


def serve_stdio(spec: str, *, name: str = "tether", tool_name: str = "run_agent") -> None:
    """Load ``module:factory`` and serve its agent over stdio until the host hangs up."""
    from tether.ops.app_loader import load_factory

    build_server(load_factory(spec), name=name, tool_name=tool_name).run("stdio")
