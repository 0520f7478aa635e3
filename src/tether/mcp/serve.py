"""``tether mcp serve``: a governed agent as one MCP tool, its interrupts asked through elicitation.

The tool (default name ``run_agent``) takes ``prompt`` and an optional ``session_id``;
each call builds the agent with the app's factory (``AppFactory.build``: a workflow runs as
its ``wf.agent``), runs
one invocation and returns the final text. When the run suspends on an interrupt (a
Confirm, an in-doubt call, a hook or tool question), each pending question goes to the
MCP host as an elicitation: a Confirm as ``{approve: bool, note: str, edit: str}``
(``edit``: a JSON object of arguments to change, merged over the call as it will run),
anything else as ``{answer: str}`` (JSON if it parses, else the string). The answers
go through ``agent.resume`` with the host's client info as ``decided_by``: the one
decision path, so they decide the approval rows and an edit obeys the edit rule (a
refused answer is asked again with the reason). Questions show the call as the
approvals inbox does (the one redaction path: ``***`` for secrets). A host that cannot
elicit (or declines) gets a result saying the session is suspended, with its id and the
pending questions: with a durable store they wait in the approvals inbox like any
other. Every result carries ``structuredContent``: ``{"status": "completed" | "stopped"
| "suspended", "stop_reason", "session_id", "text", "pending"}``. The SDK logs at
WARNING by default (``log_level``), so the host's stderr gets no per-request lines.
Served over stdio.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from mcp.server.mcpserver import Context  # the SDK reads the tool's annotations at run time
from mcp_types import CallToolResult, TextContent

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer as SDKServer

    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.ops.app_loader import AppFactory
    from tether.result import Result

_MAX_ROUNDS = 100
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def build_server(
    factory: Callable[..., Any] | AppFactory,
    *,
    name: str = "tether",
    tool_name: str = "run_agent",
    description: str | None = None,
    log_level: LogLevel = "WARNING",
) -> SDKServer:
    """An MCP server (the SDK's) offering ``factory``'s agent as the tool ``tool_name``."""
    from mcp.server.mcpserver import MCPServer as SDKServer

    from tether.ops.app_loader import AppFactory

    app = AppFactory.of(factory)
    server = SDKServer(name, log_level=log_level)
    about = description or (
        "Run the agent on a prompt and return its answer. It runs under its own policies: "
        "questions it has for a person (approvals) are asked through elicitation. Pass "
        "session_id to continue a conversation. structuredContent.status says whether the "
        "run completed, stopped, or is suspended waiting for a person."
    )

    async def run_agent(prompt: str, ctx: Context, session_id: str = "") -> CallToolResult:
        from tether.errors import AnswerError

        agent = app.build(session_id or f"mcp-{uuid.uuid4().hex[:12]}")
        who = _host(ctx)
        try:
            result = await agent.invoke_async(prompt)
            problem: str | None = None
            for _ in range(_MAX_ROUNDS):
                if result.stop_reason != "interrupt":
                    break
                answers, complete = await _ask(ctx, agent, result.interrupts, problem)
                if not answers:
                    return _suspended(agent, result.interrupts)
                try:  # targeted resume: what the host answered runs, the rest stays pending
                    result = await agent.resume_async(answers, decided_by=who)
                    problem = None
                except AnswerError as exc:  # nothing was recorded: ask again, with why
                    problem = str(exc)
                if not complete and result.stop_reason == "interrupt":
                    return _suspended(agent, result.interrupts)  # declined: for a person
            return _answer(agent, result)
        finally:
            agent.close()

    server.add_tool(run_agent, name=tool_name, description=about, structured_output=False)
    return server


def _host(ctx: Context) -> str:
    """``decided_by`` for the host's answers: its client info, as it introduced itself."""
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    label = " ".join(filter(None, [getattr(info, "name", None), getattr(info, "version", None)]))
    return f"mcp host {label or 'unknown'}"[:200]


async def _ask(
    ctx: Context, agent: Agent, pending: list[Interrupt], problem: str | None = None
) -> tuple[dict[str, Any], bool]:
    """The host's answers to the pending interrupts, and whether it answered every one (it
    may not elicit at all, or decline a question: the answers before it still count)."""
    from mcp_types import ClientCapabilities, ElicitationCapability

    wanted = ClientCapabilities(elicitation=ElicitationCapability())
    if not ctx.session.check_client_capability(wanted):
        return {}, False
    answers: dict[str, Any] = {}
    for interrupt in pending:
        message = _question(agent, interrupt)
        if problem is not None:
            message = f"{message}\n(your last answer was refused: {_shown_text(agent, interrupt, problem)})"
        if interrupt.source == "intervention":
            confirm = await ctx.elicit(message, _Confirm)
            if confirm.action != "accept" or confirm.data is None:
                return answers, False
            note = confirm.data.note or None
            if not confirm.data.approve:
                answers[interrupt.id] = {"approved": False, "reason": note}
            elif confirm.data.edit.strip():
                answers[interrupt.id] = _edited(interrupt, confirm.data.edit, note)
            else:
                answers[interrupt.id] = True
        else:
            free = await ctx.elicit(message, _Answer)
            if free.action != "accept" or free.data is None:
                return answers, False
            answers[interrupt.id] = _parsed(free.data.answer)
    return answers, True


def _edited(interrupt: Interrupt, text: str, note: str | None) -> Any:
    """An approval with the host's edit merged over the call as it will run. A value left
    masked (``***``) keeps the real one; the edit rule (in ``agent.resume``) judges the rest.
    Text that is not a JSON object goes to ``agent.resume`` as is, which refuses it."""
    from tether.governance.masks import MASK

    try:
        edit = json.loads(text)
    except ValueError:
        return {"approved": True, "args": text, "reason": note}
    if not isinstance(edit, dict) or interrupt.tool_call is None:
        return {"approved": True, "args": edit, "reason": note}
    real = dict(interrupt.tool_call.arguments)
    merged = {**real, **{k: v for k, v in edit.items() if v != MASK or k not in real}}
    return {"approved": True, "args": merged, "reason": note}


def _shown(agent: Agent, interrupt: Interrupt) -> tuple[dict[str, Any], Any]:
    from tether.governance.approvals import shown_interrupt
    from tether.governance.redaction import interrupt_redactor

    return shown_interrupt(interrupt, interrupt_redactor(agent, interrupt))


def _shown_text(agent: Agent, interrupt: Interrupt, text: str) -> str:
    """``text`` (an error about the interrupt) with the call's masked values scrubbed."""
    from dataclasses import replace

    return str(_shown(agent, replace(interrupt, reason=text))[1])


def _question(agent: Agent, interrupt: Interrupt) -> str:
    from tether.agents.addresses import address

    arguments, reason = _shown(agent, interrupt)
    text = reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)
    call = interrupt.tool_call
    about = "" if call is None else f" (tool {call.name} {json.dumps(arguments)})"
    steps = address(interrupt)  # a sub-agent's or a workflow node's: where it was asked
    where = f" in {'/'.join(steps)}" if steps else ""
    return f"session {agent.session_id}, {interrupt.source} {interrupt.id}{where}{about}: {text}"


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _result(text: str, structured: dict[str, Any], error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=error,
    )


def _answer(agent: Agent, result: Result) -> CallToolResult:
    status = {"stop_reason": result.stop_reason, "session_id": agent.session_id}
    if result.stop_reason == "interrupt":
        text = f"the run is still waiting after {_MAX_ROUNDS} rounds of questions"
        pending = [_pending(agent, i) for i in result.interrupts]
        return _result(text, {"status": "suspended", **status, "text": text, "pending": pending})
    text = result.message.text if result.message is not None else ""
    if result.stop_reason == "end_turn":
        return _result(text, {"status": "completed", **status, "text": text, "pending": []})
    shown = f"[stopped: {result.stop_reason}] {text}".strip()
    return _result(
        shown,
        {"status": "stopped", **status, "text": text, "pending": []},
        error=result.stop_reason == "error",
    )


def _pending(agent: Agent, interrupt: Interrupt) -> dict[str, Any]:
    arguments, reason = _shown(agent, interrupt)
    call = interrupt.tool_call
    return {
        "id": interrupt.id,
        "source": interrupt.source,
        "name": interrupt.name,
        "tool": None if call is None else call.name,
        "arguments": None if call is None else arguments,
        "reason": reason,
    }


def _suspended(agent: Agent, pending: list[Interrupt]) -> CallToolResult:
    lines = [
        f"session {agent.session_id} is suspended, waiting for a person to answer "
        f"{len(pending)} question(s); the MCP host did not answer them (no elicitation). "
        "With a durable store they wait in the approvals inbox (tether approvals list):"
    ]
    lines += [f"- {_question(agent, i)}" for i in pending]
    text = "\n".join(lines)
    structured = {
        "status": "suspended",
        "stop_reason": "interrupt",
        "session_id": agent.session_id,
        "text": text,
        "pending": [_pending(agent, i) for i in pending],
    }
    return _result(text, structured)


def _schemas() -> tuple[type[Any], type[Any]]:
    from pydantic import BaseModel, Field

    class Confirm(BaseModel):
        approve: bool = Field(description="Let the agent go ahead")
        note: str = Field("", description="Why (shown to the agent when you refuse)")
        edit: str = Field(
            "",
            description=(
                "Optional, with approve: a JSON object of arguments to change (merged over "
                "the call shown; the agent's policies must allow the result)"
            ),
        )

    class Answer(BaseModel):
        answer: str = Field(description="Your answer (JSON, or plain text)")

    return Confirm, Answer


_Confirm, _Answer = _schemas()


def serve_stdio(spec: str, *, name: str = "tether", tool_name: str = "run_agent") -> None:
    """Load ``module:factory`` and serve its agent over stdio until the host hangs up."""
    from tether.ops.app_loader import load_factory

    build_server(load_factory(spec), name=name, tool_name=tool_name).run("stdio")
