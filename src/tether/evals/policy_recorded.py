"""What happened to a session's recorded calls then: their results' statuses, the questions
raised for them, the ``ran`` records of their intents (noted entry by entry while the
journal is read) and the session's ``policy.verdict`` audit records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.control.interrupts import Interrupt
from tether.messages import ToolCall

if TYPE_CHECKING:
    from tether.durable import Store


@dataclass(slots=True)
class Recorded:
    """What one session's journal and audit records say happened to its calls."""

    status: dict[str, str] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)
    ran: dict[str, list[str]] = field(default_factory=dict)
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    interrupt_calls: dict[str, ToolCall | None] = field(default_factory=dict)

    def then(self, call_id: str) -> str:
        """The call's verdict then: the policy's when the audit names it, else what the
        journal shows (a question, a denied result, a rewrite)."""
        actions = self.verdicts.get(call_id, [])
        status = self.status.get(call_id)
        if "Deny" in actions:
            return "deny"
        if call_id in self.asked or "Confirm" in actions:
            return "confirm"
        if "Guide" in actions:
            return "guide"
        if status == "denied":
            return "deny"
        if call_id in self.ran or "Transform" in actions:
            return "transform"
        return "proceed"


def note(recorded: Recorded, kind: str, data: dict[str, Any]) -> None:
    """Record what an entry says happened to a call (its result, question, rewrite)."""
    if kind == "tool_result":
        result = data.get("result") or {}
        recorded.status[str(result.get("tool_call_id"))] = str(result.get("status", "ok"))
    elif kind == "message":
        message = data.get("message") or {}
        if message.get("role") == "tool":
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    key = str(block.get("tool_call_id"))
                    recorded.status[key] = str(block.get("status", "ok"))
    elif kind == "tool_intent":
        ran = data.get("ran")
        if isinstance(ran, dict):
            recorded.ran[str(data.get("call_id"))] = [str(b) for b in ran.get("by") or ()]
    elif kind == "interrupt_raised":
        for item in data.get("interrupts") or ():
            interrupt = Interrupt.from_dict(item)
            recorded.interrupt_calls[interrupt.id] = interrupt.tool_call
            # a policy's or a hook's question (a tool asking, or a crash, is no verdict)
            if interrupt.tool_call is not None and interrupt.source in ("intervention", "hook"):
                recorded.asked.add(interrupt.tool_call.id)


async def audit_verdicts(store: Store, sid: str, recorded: Recorded) -> None:
    """The session's ``policy.verdict`` records, by call id (read a page at a time)."""
    after = 0
    while True:
        records = await store.audit.records(sid, after, 1000)
        for record in records:
            call_id = record.data.get("call_id")
            if record.event == "policy.verdict" and isinstance(call_id, str):
                recorded.verdicts.setdefault(call_id, []).append(str(record.data.get("action")))
        if len(records) < 1000:
            return
        after = records[-1].seq
