"""A workflow (and an agent tree) where one agent's secret is quoted into a later call.

``pay`` calls ``charge(card=CARD, memo=PLAIN)``: a redactor hiding ``card`` by name masks
it; pay's answer quotes the card. ``notify`` is handed that answer as its task and calls
``send(text=<its task>)`` (then once more, ``<its task> again``), which a Confirm holds: the row, the views of the
tree and the protocol hosts must show the card nowhere, the memo (not hidden) everywhere.

``flow(store, sid)``: ``Sequential(pay, notify)`` with the redactor on the workflow's
``ApprovalPolicy`` (item: a quoted secret). ``inner_flow`` / ``inner_tree``: the redactor on
pay's own policy only, the outer without, and the Confirm before ``charge`` (item: an
inner agent's policy files the row).
"""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.control import ApprovalPolicy, BeforeToolCall, Confirm, InterventionHandler
from tether.durable import MemoryStore, Store
from tether.models import ScriptedModel
from tether.workflows import Sequential

CARD = "4111-2222-3333-4444"
PLAIN = "espresso-order-77"
CVV = 987


def hide_card(tool_name: str | None, args: dict[str, Any]) -> dict[str, Any]:
    """The argument-name redactor: ``card`` and ``cvv`` of ``charge`` (a 3-digit cvv is too
    short to be scrubbed from other text: only its key's mask hides it)."""
    if tool_name == "charge":
        return {**args, **{k: "***" for k in ("card", "cvv") if k in args}}
    return args


class ConfirmTool(InterventionHandler):
    def __init__(self, name: str) -> None:
        self.name = name

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == self.name:
            return Confirm(f"{self.name} {event.tool_call.arguments}?")
        return None


@tool
def charge(card: str, memo: str, cvv: int = 0) -> str:
    """Charge a card."""
    return f"charged {card} for {memo}"


@tool
def send(text: str) -> str:
    """Send a message."""
    return f"sent ({len(text)} characters)"


def _pay(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "paid: " + messages[-1].tool_results[0].content
    args = {"card": CARD, "memo": PLAIN, "cvv": CVV}
    return {"tool_calls": [{"id": "p1", "name": "charge", "args": args}]}


def _notify(messages: list[Any], specs: list[Any]) -> Any:
    """send(task), then send(task + " again") (each confirmed), then the answer."""
    sent = sum(1 for m in messages if m.role == "tool")
    if sent == 2:
        return "notified"
    text = messages[0].text + (" again" if sent else "")
    return {"tool_calls": [{"id": f"n{sent + 1}", "name": "send", "args": {"text": text}}]}


def pay_agent(**options: Any) -> Agent:
    return Agent(ScriptedModel(_pay), tools=[charge], name="pay", **options)


def notify_agent() -> Agent:
    return Agent(ScriptedModel(_notify), tools=[send], name="notify")


def flow(store: Store | None, session_id: str | None = None) -> Sequential:
    """pay -> notify; the workflow hides ``card`` and confirms every ``send``."""
    return Sequential(
        pay_agent(),
        notify_agent(),
        name="flow",
        store=store,
        session_id=session_id,
        interventions=[ConfirmTool("send")],
        approvals=ApprovalPolicy(redactor=hide_card),
    )


def inner_policy() -> ApprovalPolicy:
    return ApprovalPolicy(redactor=hide_card, ttl=60.0)


def inner_flow(store: Store, session_id: str) -> Sequential:
    """pay (its own policy hides ``card``, rows expire in 60 s) -> notify; the workflow
    confirms every ``charge`` and has no redactor."""
    return Sequential(
        pay_agent(approvals=inner_policy()),
        notify_agent(),
        name="flow",
        store=store,
        session_id=session_id,
        interventions=[ConfirmTool("charge")],
    )


def _lead(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "lead: " + messages[-1].tool_results[0].content
    return {"tool_calls": [{"id": "t1", "name": "pay", "args": {"task": "pay it"}}]}


def inner_tree(store: Store, session_id: str) -> Agent:
    """lead -> pay (as_tool; pay's own policy hides ``card``); the lead confirms ``charge``
    and has no redactor."""
    return Agent(
        ScriptedModel(_lead),
        tools=[pay_agent(approvals=inner_policy()).as_tool("pay")],
        store=store,
        session_id=session_id,
        interventions=[ConfirmTool("charge")],
    )


def make_flow(session_id: str) -> Any:
    """``--app quoting_tree:make_flow`` (its workflow's agent gives the views the redactor)."""
    return flow(MemoryStore(), session_id)


_stores: dict[str, Store] = {}


def served_flow(session_id: str) -> Any:
    """A host's ``--app`` factory: :func:`flow` on the SQLite store ``$QUOTING_DB``."""
    import os

    from tether.durable import SQLiteStore

    path = os.environ["QUOTING_DB"]
    if path not in _stores:
        _stores[path] = SQLiteStore(path)
    return flow(_stores[path], session_id)


def served_inner_flow(session_id: str) -> Any:
    """A host's ``--app`` factory: :func:`inner_flow` on the SQLite store ``$QUOTING_DB``."""
    import os

    from tether.durable import SQLiteStore

    path = os.environ["QUOTING_DB"]
    if path not in _stores:
        _stores[path] = SQLiteStore(path)
    return inner_flow(_stores[path], session_id)
