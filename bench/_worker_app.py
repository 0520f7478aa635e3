"""The app benchmarked by bench/workers.py: one Confirm-gated call of a 10 ms tool.

``agent_factory(session_id)`` appends ``start <session> <unix time>`` to
``$TETHER_BENCH_TIMES`` when a worker builds the agent (the resume starts right after),
and the tool appends ``end <session> <unix time>`` after its 10 ms.
"""

from __future__ import annotations

import os
import time
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.ops.store_url import open_store

_STORES: dict[str, Store] = {}


def _mark(kind: str, session_id: str) -> None:
    path = os.environ.get("TETHER_BENCH_TIMES")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"{kind} {session_id} {time.time():.6f}\n")


class AskFirst(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm("run the 10 ms tool?")


def agent_factory(session_id: str, store: Store | None = None) -> Agent:
    if store is None:
        url = os.environ["TETHER_WORKER_STORE"]
        store = _STORES.get(url) or _STORES.setdefault(url, open_store(url))
        _mark("start", session_id)

    @tool
    def work() -> str:
        """Do 10 ms of work."""
        time.sleep(0.010)
        _mark("end", session_id)
        return "worked"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "done"}
        return {"tool_calls": [{"name": "work", "args": {}}]}

    return Agent(
        model=ScriptedModel(script),
        tools=[work],
        interventions=[AskFirst()],
        store=store,
        session_id=session_id,
    )
