"""The app the Temporal tests serve: ``TetherPlugin(app="temporal_app:agent_factory")``.

Environment: ``TETHER_TEMPORAL_OUT`` (``send`` appends one line per real execution),
``TETHER_TEMPORAL_SLOW`` (seconds ``send`` sleeps after its side effect when the session
id contains "slow"). The scripted model calls ``lookup`` (idempotent, no approval), then
``send`` (not idempotent; a Confirm asks first), then answers with the tool results.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.models import ScriptedModel


class ConfirmSend(InterventionHandler):
    name = "confirm-send"

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "send":
            return Confirm(f"send to {event.tool_call.arguments.get('to')}?")
        return None


@tool(idempotent=True)
def lookup(name: str) -> str:
    """Look up an address.

    Args:
        name: Who.
    """
    return f"{name}@example.com"


def agent_factory(session_id: str) -> Agent:
    out = Path(os.environ.get("TETHER_TEMPORAL_OUT", os.devnull))
    slow = float(os.environ.get("TETHER_TEMPORAL_SLOW", "0")) if "slow" in session_id else 0.0

    @tool
    def send(to: str, text: str) -> str:
        """Send a message (not idempotent).

        Args:
            to: The address.
            text: The message.
        """
        with out.open("a", encoding="utf-8") as f:
            f.write(f"{session_id} {to} {text}\n")
        if slow:
            time.sleep(slow)
        return f"sent to {to}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn == 0:
            return {"tool_calls": [{"name": "lookup", "args": {"name": "ada"}}]}
        if turn == 1:
            return {
                "tool_calls": [{"name": "send", "args": {"to": "ada@example.com", "text": "hi"}}]
            }
        last = messages[-1].content[-1]
        return {"text": f"done: {getattr(last, 'content', last)}"}

    return Agent(
        model=ScriptedModel(script),
        tools=[lookup, send],
        interventions=[ConfirmSend()],
        session_id=session_id,
    )
