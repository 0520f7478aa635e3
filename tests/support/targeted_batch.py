"""One agent's batch of two transfers (bob, ann), each behind a Confirm; one step per process.

``transfer`` appends the payee to EFFECTS, so a repeated side effect shows. The model
answers with the batch's results, in the batch's order, once its tool message is in.

Usage: python targeted_batch.py DB EFFECTS start | resume ANSWERS_JSON | die ANSWERS_JSON
(``die``: resume, and SIGKILL this process right after the journal append that holds a
tool result). TARGETED_CRASH=1: see ``build(crash=True)``; TARGETED_HANG=1: ``hang``. Prints one JSON line: stop_reason, text, interrupt ids, or
{"error": class name, "message": ...} when the resume is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent_tree import open_store

from tether import Agent, Execution, TetherError, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel

SESSION = "pay-both"
CALLS = [
    {"id": "t1", "name": "transfer", "args": {"to": "bob"}},
    {"id": "t2", "name": "transfer", "args": {"to": "ann"}},
]


class AskEach(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm:
        return Confirm(f"pay {event.tool_call.arguments['to']}?")


def turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "paid: " + " + ".join(r.content for r in messages[-1].tool_results)
    return {"tool_calls": CALLS}


def build(
    store: Store | None,
    effects: Path,
    *,
    crash: bool = False,
    hang: bool = False,
    gate: Callable[[str], Awaitable[None]] | None = None,
) -> Agent:
    """The agent; ``transfer`` is read-only for the planner, so the two calls run in one
    concurrent group (a parallel batch), though each appends to ``effects``. ``crash``:
    no Confirm and 1 s leases; ``hang``: each call hangs after its side effect (the test
    SIGKILLs the process there, leaving both calls in doubt); ``gate(payee)`` is awaited
    before the side effect (a test holds a call there while it acts)."""

    @tool(read_only=True)
    async def transfer(to: str) -> str:
        """Pay someone (a side effect that must happen once)."""
        if gate is not None:
            await gate(to)
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{to}\n")
        if hang:
            await asyncio.sleep(3600)
        return f"sent to {to}"

    return Agent(
        model=ScriptedModel(turn),
        tools=[transfer],
        interventions=[] if crash else [AskEach()],
        store=store,
        session_id=SESSION if store is not None else None,
        execution=Execution(lease_ttl=1.0 if crash else 30.0),
    )


def dying(store: Store) -> Store:
    """``store``, killing this process right after it appends a tool result."""
    append = store.append

    async def append_then_die(*args: Any, **kwargs: Any) -> Any:
        written = await append(*args, **kwargs)
        if any(kind == "tool_result" for kind, _ in args[2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return written

    store.append = append_then_die  # type: ignore[method-assign]
    return store


def main() -> None:
    db, effects, mode, *rest = sys.argv[1:]
    store = open_store(db)
    crash, hang = bool(os.environ.get("TARGETED_CRASH")), bool(os.environ.get("TARGETED_HANG"))
    agent = build(dying(store) if mode == "die" else store, Path(effects), crash=crash, hang=hang)
    try:
        result = agent("pay both") if mode == "start" else agent.resume(json.loads(rest[0]))
    except TetherError as exc:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}), flush=True)
        return
    report = {
        "stop_reason": result.stop_reason,
        "text": result.text,
        "interrupts": [i.id for i in result.interrupts],
    }
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
