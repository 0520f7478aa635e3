"""Small agents whose runs suspend the ways that ask a human (shared by the operations tests)."""

from __future__ import annotations

from typing import Any

from tether import Agent, ToolContext, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler, Transform
from tether.durable import Store
from tether.messages import ToolCall
from tether.models import ScriptedModel

SECRET = "sk-live-4f9a8b7c6d5e"


class AskFirst(InterventionHandler):
    """Confirm every transfer (no confirm callback: the run suspends)."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "transfer":
            args = event.tool_call.arguments
            return Confirm(
                f"send {args.get('amount')} to {args.get('to')} using {args.get('api_token')}?"
            )
        return None


def transfer_agent(store: Store, session: str, ran: list[dict[str, Any]], **options: Any) -> Agent:
    """A model that calls transfer(to, amount, api_token) once, then reports the result."""

    @tool
    def transfer(to: str, amount: int, api_token: str) -> str:
        """Send money."""
        ran.append({"to": to, "amount": amount, "api_token": api_token})
        return f"sent {amount} to {to}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "done: " + messages[-1].tool_results[0].content}
        call = {"name": "transfer", "args": {"to": "bob", "amount": 500, "api_token": SECRET}}
        return {"tool_calls": [call]}

    return Agent(
        model=ScriptedModel(script),
        tools=[transfer],
        store=store,
        session_id=session,
        **({"interventions": [AskFirst()]} | options),
    )


def delete_agent(store: Store, session: str, ran: list[Any]) -> Agent:
    """A tool that asks through ToolContext.interrupt before deleting."""

    @tool
    def delete(path: str, ctx: ToolContext) -> str:
        """Delete a file after a human approves."""
        answer = ctx.interrupt("approve_delete", f"delete {path}?")
        ran.append(answer)
        return f"deleted {path}: {answer}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "tool":
            return {"text": "finished: " + messages[-1].tool_results[0].content}
        return {"tool_calls": [{"name": "delete", "args": {"path": "/tmp/x"}}]}

    return Agent(model=ScriptedModel(script), tools=[delete], store=store, session_id=session)


def validating_agent(session_id: str) -> Agent:
    """``tether approvals approve --app ops_agents:validating_agent``: the tools, for validation."""
    from tether.durable import MemoryStore

    return transfer_agent(MemoryStore(), session_id, [])


class Crash(BaseException):
    """Stands in for the process dying mid-tool (nothing catches it)."""


async def crash_mid_call(store: Store, session: str) -> None:
    """A run whose non-idempotent ``effect(token)`` started (its intent journaled) when
    the process died: the call is in doubt."""

    @tool(name="effect")
    async def effect(token: str) -> str:
        """A side effect."""
        raise Crash

    agent = Agent(
        model=ScriptedModel([{"tool_calls": [{"name": "effect", "args": {"token": SECRET}}]}]),
        tools=[effect],
        store=store,
        session_id=session,
    )
    try:
        await agent.invoke_async("go")
    except Crash:
        return
    raise AssertionError("the run was expected to die mid-call")


def effect_agent(store: Store, session: str, ran: list[str]) -> Agent:
    """The recovered agent of :func:`crash_mid_call`: its resume asks about the call in
    doubt (an ``in_doubt`` approval) and, once answered, ends with the tool's result."""

    @tool(name="effect")
    def effect(token: str = "") -> str:
        """A side effect."""
        ran.append(token)
        return "effect done"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> str:
        return "finished: " + messages[-1].tool_results[0].content

    return Agent(model=ScriptedModel(script), tools=[effect], store=store, session_id=session)


class PinRecipient(InterventionHandler):
    """A policy Transform ahead of the Confirm: every transfer goes to escrow."""

    def before_tool_call(self, event: BeforeToolCall) -> Transform | None:
        call = event.tool_call
        if call.name != "transfer":
            return None
        return Transform(lambda c: ToolCall(c.id, c.name, {**c.arguments, "to": "escrow"}))


def pinned_transfer_agent(store: Store, session: str, ran: list[dict[str, Any]]) -> Agent:
    """transfer_agent with PinRecipient before AskFirst (the Transform runs, then the Confirm)."""
    return transfer_agent(store, session, ran, interventions=[PinRecipient(), AskFirst()])


def pinned_validating_agent(session_id: str) -> Agent:
    """``--app ops_agents:pinned_validating_agent``: the pinned agent's tools and policies."""
    from tether.durable import MemoryStore

    return pinned_transfer_agent(MemoryStore(), session_id, [])


async def ran_with_sessions(db: Any) -> list[dict[str, Any]]:
    """In the SQLite file ``db``: pin-1 (PinRecipient pins the recipient, alice approves),
    edit-1 (alice edits the amount) and plain-1 (alice approves the model's call), each
    resumed and completed; returns what the tool ran with, in that order."""
    from tether.durable import SQLiteStore

    store = SQLiteStore(db)
    ran: list[dict[str, Any]] = []
    cases = [
        ("pin-1", pinned_transfer_agent, None, pinned_validating_agent),
        ("edit-1", transfer_agent, {"amount": 5}, validating_agent),
        ("plain-1", transfer_agent, None, validating_agent),
    ]
    for sid, build, edit, validate in cases:
        assert (await build(store, sid, ran).invoke_async("pay bob")).stop_reason == "interrupt"
        [approval] = await store.approvals.pending(session_id=sid)
        await store.approvals.decide(
            approval.id, "approve", decided_by="alice", edited_args=edit, validate=validate(sid)
        )
        answers = await store.approvals.answers_for(sid)
        assert (await build(store, sid, ran).resume_async(answers)).stop_reason == "end_turn"
    await store.close()
    return ran
