"""An agent whose ApprovalPolicy redactor masks `to` and `amount` of transfers (and `account`
of lookups), for the one-redaction-path tests (API, CLI)."""

from __future__ import annotations

from typing import Any

from ops_agents import SECRET, AskFirst

from tether import Agent, tool
from tether.control import ApprovalPolicy
from tether.durable import MemoryStore, Store
from tether.models import ScriptedModel

PAYEE = "mallory-account-7731"
AMOUNT = 98765
ACCOUNT = "acct-lookup-4242"


def hide_payee(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
    """The custom redactor (it does not mask secrets itself: the default does)."""
    if tool_name == "transfer":
        return {**args, "to": "***", "amount": "***"}
    if tool_name == "lookup":
        return {**args, "account": "***"}
    return args


def redacting_agent(store: Store, session: str, ran: list[dict[str, Any]]) -> Agent:
    """lookup(account) (no approval), then transfer(to, amount, api_token) (Confirm)."""

    @tool
    def lookup(account: str) -> str:
        """Look an account up."""
        return f"{account} is fine"

    @tool
    def transfer(to: str, amount: int, api_token: str) -> str:
        """Send money."""
        ran.append({"to": to, "amount": amount, "api_token": api_token})
        return f"sent {amount} to {to}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        last = messages[-1]
        if last.role == "user":
            return {"tool_calls": [{"name": "lookup", "args": {"account": ACCOUNT}}]}
        if last.tool_results[0].name == "lookup":
            args = {"to": PAYEE, "amount": AMOUNT, "api_token": SECRET}
            return {"text": f"paying {PAYEE}", "tool_calls": [{"name": "transfer", "args": args}]}
        return {"text": "done: " + last.tool_results[0].content}

    return Agent(
        model=ScriptedModel(script),
        tools=[lookup, transfer],
        interventions=[AskFirst()],
        store=store,
        session_id=session,
        approvals=ApprovalPolicy(redactor=hide_payee),
    )


def make_agent(session_id: str) -> Agent:
    """``--app redacting_agents:make_agent``: the session's Agent (its tools and redactor)."""
    return redacting_agent(MemoryStore(), session_id, [])
