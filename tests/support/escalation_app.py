"""A durable agent whose AGENT-HOOKS policy escalates a transfer (run as a child process).

Usage: python escalation_app.py DB SESSION_ID start|resume [ANSWERS_JSON]
Each real execution of ``transfer`` appends a line to DB + ".effects".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.control.agent_hooks import AgentHooksHost, DurableApprovals
from tether.durable import SQLiteStore
from tether.models import ScriptedModel


class ApproveTransfers:
    """Escalates every transfer (a liftable deny for the approval seam)."""

    def intercept(self, ctx: dict[str, Any]) -> dict[str, Any]:
        if ctx["interception_point"] == "pre_tool_call" and ctx["tool_call"]["name"] == "transfer":
            return {"decision": "deny", "reason": "policy:needs-approval", "approval": {}}
        return {"decision": "allow"}


def build(db: str, session_id: str) -> Agent:
    effects = Path(db + ".effects")

    @tool
    def transfer(amount: int) -> str:
        """Move money (not idempotent)."""
        with effects.open("a", encoding="utf-8") as f:
            f.write(f"{amount}\n")
        return f"moved {amount}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": "result: " + messages[-1].tool_results[0].content}
        return {"tool_calls": [{"id": "call-1", "name": "transfer", "args": {"amount": 100}}]}

    return Agent(
        model=ScriptedModel(script),
        tools=[transfer],
        agent_hooks=AgentHooksHost([ApproveTransfers()], approval_resolver=DurableApprovals()),
        store=SQLiteStore(db),
        session_id=session_id,
    )


def main() -> None:
    db, session_id, mode = sys.argv[1:4]
    agent = build(db, session_id)
    result = agent("send 100") if mode == "start" else agent.resume(json.loads(sys.argv[4]))
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "text": result.text,
                "interrupts": [i.to_dict() for i in result.interrupts],
            }
        )
    )


if __name__ == "__main__":
    main()
