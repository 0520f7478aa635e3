"""The app the worker tests run: ``tether worker --app worker_app:agent_factory``.

Environment: ``TETHER_WORKER_STORE`` (store URL, used when no store is passed),
``TETHER_WORKER_OUT`` (the tool appends one line per real execution),
``TETHER_WORKER_LEASE_TTL`` (the Agent's lease ttl, default 30), ``TETHER_WORKER_SLOW``
(seconds the tool sleeps after its side effect in sessions whose id contains "slow").
Sessions whose id starts with "two" call the tool twice (two model turns). Only the
first call of a session asks for approval (a Confirm), so a run suspends once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tether import Agent, Execution, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.ops.store_url import open_store

_STORES: dict[str, Store] = {}


class ApproveFirstCall(InterventionHandler):
    name = "approve-first-call"

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        text = str(event.tool_call.arguments.get("text", ""))
        return Confirm(f"append {text}?") if text.endswith(":1") else None


def agent_factory(session_id: str, store: Store | None = None) -> Agent:
    if store is None:
        url = os.environ["TETHER_WORKER_STORE"]
        store = _STORES.get(url) or _STORES.setdefault(url, open_store(url))
    out = Path(os.environ.get("TETHER_WORKER_OUT", os.devnull))
    slow = float(os.environ.get("TETHER_WORKER_SLOW", "0")) if "slow" in session_id else 0.0

    @tool
    def append_line(text: str) -> str:
        """Append a line to the output file (not idempotent).

        Args:
            text: The line.
        """
        with out.open("a", encoding="utf-8") as f:
            f.write(text + "\n")
        if slow:
            time.sleep(slow)
        return f"appended {text}"

    calls = 2 if session_id.startswith("two") else 1

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for m in messages if m.role == "assistant")
        if turn < calls:
            args = {"text": f"{session_id}:{turn + 1}"}
            return {"tool_calls": [{"name": "append_line", "args": args}]}
        return {"text": f"done {session_id}"}

    return Agent(
        model=ScriptedModel(script),
        tools=[append_line],
        interventions=[ApproveFirstCall()],
        store=store,
        session_id=session_id,
        execution=Execution(lease_ttl=float(os.environ.get("TETHER_WORKER_LEASE_TTL", "30"))),
    )
