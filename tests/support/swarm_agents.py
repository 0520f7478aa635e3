"""A support swarm (triage hands off to billing, billing refunds under the swarm's
Confirm), one step per process, for the handoff tests.

Usage: python swarm_agents.py DB EFFECTS start | resume ANSWERS_JSON
Prints one JSON line: stop_reason, text, interrupts (id, name, point, source).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel
from tether.workflows import Swarm

sys.path.insert(0, str(Path(__file__).parent))

from workflow_agents import open_store


class ConfirmRefunds(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "refund":
            return Confirm(f"refund {event.tool_call.arguments.get('amount')}?")
        return None


def triage_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":  # (never reached: the handoff ends triage's run)
        return "triage answered itself"
    return {
        "tool_calls": [
            {"id": "h1", "name": "handoff", "args": {"agent": "billing", "message": "a refund"}}
        ]
    }


def billing_turn(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return f"billing: {messages[-1].tool_results[0].content} ({len(specs)} tools)"
    return {"tool_calls": [{"id": "r1", "name": "refund", "args": {"amount": 30}}]}


def support_swarm(store: Store | None, effects: Path, **options: Any) -> Swarm:
    @tool
    def refund(amount: int) -> str:
        """Refund the customer (a side effect that must happen once)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"refund {amount}\n")
        return f"refunded {amount}"

    @tool
    def lookup(order: str) -> str:
        """Look an order up."""
        return f"order {order}"

    triage = Agent(ScriptedModel(triage_turn), tools=[lookup], name="triage")
    billing = Agent(ScriptedModel(billing_turn), tools=[refund], name="billing")
    return Swarm(
        [triage, billing],
        entry="triage",
        store=store,
        session_id="swarm-1" if store is not None else None,
        interventions=[ConfirmRefunds()],
        **options,
    )


def main() -> None:
    db, effects, mode, *rest = sys.argv[1:]
    swarm = support_swarm(open_store(db), Path(effects))
    result = (
        swarm.run("I want my money back") if mode == "start" else swarm.resume(json.loads(rest[0]))
    )
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "text": result.text,
                "interrupts": [
                    {"id": i.id, "name": i.name, "point": i.point, "source": i.source}
                    for i in result.interrupts
                ],
            }
        ),
        flush=True,
    )


def step(db: str | Path, effects: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, str(db), str(effects), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


if __name__ == "__main__":
    main()
