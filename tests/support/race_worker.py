"""A long-lived worker for the resume race: resumes approved interrupts when told to.

Usage: python race_worker.py STORE_URL   (``sqlite:PATH`` or a PostgreSQL DSN)
Protocol (one JSON line each way): the parent sends ``{"session", "iid", "effects"}``;
the worker builds the agent, answers ``{"ready": true}`` and waits for a ``go`` line
(the start barrier), then resumes with ``{iid: "approve"}`` and answers
``{"ok": stop_reason}`` or ``{"error": class name, "message": ...}``. EOF ends it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tether import Agent, TetherError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import PostgresStore, SQLiteStore, Store
from tether.models import ScriptedModel


class AskFirst(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm(f"record {event.tool_call.arguments.get('line')}?")


def build(store: Store, session_id: str, effects: Path) -> Agent:
    @tool
    def record(line: str) -> str:
        """Append a line to the effects file (not idempotent)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        return f"recorded {line}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "done: " + messages[-1].tool_results[0].content}
        return {"tool_calls": [{"name": "record", "args": {"line": session_id}}]}

    return Agent(
        model=ScriptedModel(script),
        tools=[record],
        interventions=[AskFirst()],
        store=store,
        session_id=session_id,
    )


def open_store(url: str) -> Store:
    if url.startswith("sqlite:"):
        return SQLiteStore(url.removeprefix("sqlite:"))
    return PostgresStore(url)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def main() -> None:
    store = open_store(sys.argv[1])
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return
            trial = json.loads(line)
            agent = build(store, trial["session"], Path(trial["effects"]))
            await store.load(trial["session"])  # connection open before the barrier
            send({"ready": True})
            if (await asyncio.to_thread(sys.stdin.readline)).strip() != "go":
                return
            try:
                result = await agent.resume_async({trial["iid"]: "approve"})
            except TetherError as exc:
                send({"error": type(exc).__name__, "message": str(exc)})
            else:
                send({"ok": result.stop_reason})
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
