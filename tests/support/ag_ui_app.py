"""Agents served over AG-UI in the tests (``factory(store)`` -> an ``--app`` factory whose
agent depends on the thread id's prefix), and a small SSE client that parses every event
with the ``ag_ui.core`` models."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from tether import Agent, Limits, ToolContext, tool
from tether.control import (
    ApprovalPolicy,
    BeforeToolCall,
    Confirm,
    Deny,
    InterventionHandler,
)
from tether.durable import Store
from tether.models import ScriptedModel
from tether.tools import clarify

SECRET = "sk-live-4f9a8b7c6d5e"
GATE = threading.Event()
"""Set by a test to let a ``slow-*`` thread's tool return."""
EVENT = TypeAdapter(Event)


class Policy(InterventionHandler):
    """Confirm every transfer and the front end's ``send_email``; deny its ``wipe_screen``."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | Deny | None:
        call = event.tool_call
        if call.name == "transfer":
            return Confirm(f"send {call.arguments.get('amount')} to {call.arguments.get('to')}?")
        if call.name == "wipe_screen":
            return Deny("wiping the screen is not allowed")
        if call.name == "send_email":
            return Confirm("send the email?")
        return None


def _last_tool_text(messages: list[Any]) -> str:
    return " + ".join(r.content for r in messages[-1].tool_results)


def factory(store: Store, ran: list[Any]) -> Any:
    """The ``--app`` factory: ``text-*``, ``tools-*``, ``pay-*``, ``front-*``,
    ``frontdeny-*``, ``tree-*``, ``fail-*`` (no turns), ``cancel-*``, ``limit-*``,
    ``leak-*``, ``slow-*`` (waits for GATE), ``linger-*`` (slow to cancel), ``ask-*`` (clarify), ``nostore-*`` (no store) and ``broken-*`` (the factory fails) threads (``ran`` records side effects)."""

    @tool
    def transfer(to: str, amount: int, api_token: str) -> str:
        """Send money."""
        ran.append({"to": to, "amount": amount})
        return f"sent {amount} to {to}"

    @tool
    def note(text: str, ctx: ToolContext) -> str:
        """Remember a note."""
        ctx.state.setdefault("notes", []).append(text)
        return f"noted {text}"

    @tool
    def wait() -> str:
        """Wait until the test lets the run go on."""
        GATE.wait(timeout=20)
        return "waited"

    @tool
    async def linger() -> str:
        """Take long; when cancelled, take a second more to clean up."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(1.0)
            raise
        return "lingered"

    @tool
    def stop(ctx: ToolContext) -> str:
        """Stop the run."""
        ctx.agent.cancel()
        return "stopping"

    def loop_turn(messages: list[Any], specs: list[Any]) -> Any:
        name = specs[0]["name"]
        call = {"name": name, "args": {"text": "again"} if name == "note" else {}}
        return {"text": "working", "tool_calls": [call]}

    def ask_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "you said " + _last_tool_text(messages)
        return {
            "tool_calls": [{"id": "q1", "name": "clarify", "args": {"question": "which colour?"}}]
        }

    def text_turn(messages: list[Any], specs: list[Any]) -> Any:
        return {"reasoning": "the user greets me", "text": f"hello, {messages[-1].text}"}

    def tools_turn_for(name: str, args: dict[str, Any] | None = None) -> Any:
        def turn(messages: list[Any], specs: list[Any]) -> Any:
            if messages[-1].role == "tool":
                return "done: " + _last_tool_text(messages)
            return {"tool_calls": [{"id": "n1", "name": name, "args": args or {}}]}

        return turn

    tools_turn = tools_turn_for("note", {"text": "milk"})

    def pay_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "paid: " + _last_tool_text(messages)
        return {
            "tool_calls": [
                {
                    "id": "t1",
                    "name": "transfer",
                    "args": {"to": "bob", "amount": 500, "api_token": SECRET},
                },
                {
                    "id": "t2",
                    "name": "transfer",
                    "args": {"to": "eve", "amount": 9, "api_token": SECRET},
                },
            ]
        }

    def front_turn(messages: list[Any], specs: list[Any]) -> Any:
        names = [s["name"] for s in specs]
        if messages[-1].role == "tool":
            return f"the user chose: {_last_tool_text(messages)} (tools: {','.join(names)})"
        wanted = next((n for n in ("wipe_screen", "send_email") if n in names), "pick_color")
        return {"tool_calls": [{"id": "f1", "name": wanted, "args": {"options": ["red", "blue"]}}]}

    def child_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "child: " + _last_tool_text(messages)
        call = {
            "id": "k1",
            "name": "transfer",
            "args": {"to": "kim", "amount": 3, "api_token": SECRET},
        }
        return {"text": "child working", "tool_calls": [call]}

    def parent_turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "parent: " + _last_tool_text(messages)
        return {"tool_calls": [{"id": "p1", "name": "helper", "args": {"task": "pay kim"}}]}

    def make(session_id: str) -> Agent:
        kind = session_id.split("-", 1)[0]
        common: dict[str, Any] = {
            "store": store,
            "session_id": session_id,
            "interventions": [Policy()],
            "approvals": ApprovalPolicy(ttl=3600),
        }
        if kind == "tree":
            child = Agent(
                model=ScriptedModel(child_turn), tools=[transfer], store=None, name="helper"
            )
            helper = child.as_tool("helper", "Pays people")
            return Agent(model=ScriptedModel(parent_turn), tools=[helper], **common)
        if kind == "broken":
            raise RuntimeError(f"cannot reach the model with api_key={SECRET}")
        if kind == "nostore":
            return Agent(model=ScriptedModel(text_turn), store=None, session_id=session_id)
        if kind == "fail":
            return Agent(model=ScriptedModel([]), **common)
        if kind == "cancel":
            return Agent(model=ScriptedModel(loop_turn), tools=[stop], **common)
        if kind == "ask":
            return Agent(model=ScriptedModel(ask_turn), tools=[clarify()], **common)
        if kind == "linger":
            return Agent(model=ScriptedModel(tools_turn_for("linger")), tools=[linger], **common)
        if kind == "slow":
            return Agent(model=ScriptedModel(tools_turn_for("wait")), tools=[wait], **common)
        if kind == "limit":
            return Agent(
                model=ScriptedModel(loop_turn), tools=[note], limits=Limits(turns=2), **common
            )
        scripts = {
            "leak": (lambda m, s: f"the key is api_key={SECRET}", []),
            "text": (text_turn, []),
            "tools": (tools_turn, [note]),
            "pay": (pay_turn, [transfer]),
            "front": (front_turn, []),
            "frontdeny": (front_turn, []),
        }
        script, tools = scripts[kind]
        return Agent(model=ScriptedModel(script), tools=tools, **common)

    return make


def post_run(url: str, token: str | None, body: Any, timeout: float = 30) -> tuple[int, Any]:
    """POST ``body`` to ``url``/ag-ui; (status, the parsed events) for a stream, else
    (status, the JSON error body). Every event is validated by the ag_ui.core models."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{url}/ag-ui", data=data, method="POST", headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            status, raw, kind = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    assert kind.get("content-type", "").startswith("text/event-stream"), kind
    events = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        assert block.startswith("data: "), block
        events.append(EVENT.validate_json(block[len("data: ") :]))
    return status, events


def run_input(thread: str, run: str, messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    """A RunAgentInput (wire names)."""
    return {"threadId": thread, "runId": run, "messages": messages, **more}


def user(text: str, mid: str = "u1") -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text}


class _EffectsFile(list[Any]):
    """``ran`` of a served process: every side effect also appended to a file."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    def append(self, item: Any) -> None:
        super().append(item)
        with open(self.path, "a") as out:
            out.write(json.dumps(item) + "\n")


_served: dict[str, Any] = {}


def served_agent(session_id: str) -> Agent:
    """``tether serve --app ag_ui_app:served_agent``: the agents above on the SQLite store
    ``$TETHER_AGUI_DB``, side effects in ``$TETHER_AGUI_EFFECTS``."""
    import os

    from tether.durable import SQLiteStore

    if "make" not in _served:
        store = SQLiteStore(os.environ["TETHER_AGUI_DB"])
        _served["make"] = factory(store, _EffectsFile(os.environ["TETHER_AGUI_EFFECTS"]))
    return _served["make"](session_id)  # type: ignore[no-any-return]
