"""JSON views of approvals, sessions and audit records, as the server returns them.

Transcripts go through the same redaction as approvals: tool-call arguments are
masked by :func:`~tether.durable.redact_secrets`, and every string a mask hid is
scrubbed from all the other text of the session (messages, results, reasons).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import _hidden_strings, _scrub, redact_secrets

if TYPE_CHECKING:
    from tether.durable import Approval, SessionRecord, SessionSummary
    from tether.durable.audit import AuditRecord, VerifyReport
    from tether.messages import ContentBlock, ToolCall
    from tether.session import SessionView


def approval_json(a: Approval, *, can_decide: bool, now: float | None = None) -> dict[str, Any]:
    """An approval as approvers see it (arguments and reason were redacted when filed)."""
    out = a.to_dict()
    out["age_seconds"] = max(0.0, (time.time() if now is None else now) - a.requested_at)
    out["can_decide"] = can_decide
    out["takes_edits"] = a.source == "intervention" and a.tool is not None
    return out


def summary_json(s: SessionSummary) -> dict[str, Any]:
    return {
        "session_id": s.session_id,
        "status": s.status,
        "version": s.version,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
    }


class _Redacted:
    """Redacts tool calls and remembers what it hid, to scrub it from every other string."""

    def __init__(self) -> None:
        self.hidden: set[str] = set()

    def call(self, call: ToolCall) -> dict[str, Any]:
        real = dict(call.arguments)
        shown = redact_secrets(call.name, real)
        _hidden_strings(real, shown, self.hidden)
        return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": shown}

    def scrub(self, value: Any) -> Any:
        return _scrub(value, self.hidden)


def session_json(record: SessionRecord, view: SessionView, tail: int) -> dict[str, Any]:
    """Status, waiting interrupts and the last ``tail`` transcript messages (redacted)."""
    redact = _Redacted()
    # collect every secret first, so text before the call that carried it is scrubbed too
    for message in view.messages:
        for block in message.content:
            if block.type == "tool_call":
                redact.call(block)
    calls = view.pending[0] if view.pending is not None else []
    for call in calls:
        redact.call(call)
    for item in view.interrupts:
        if item.tool_call is not None:
            redact.call(item.tool_call)
    shown = view.messages[-tail:] if tail > 0 else []
    messages = [{"role": m.role, "content": [_block(b, redact) for b in m.content]} for m in shown]
    waiting = [
        {
            "id": i.id,
            "name": i.name,
            "source": i.source,
            "reason": redact.scrub(i.reason),
            "tool_call": None if i.tool_call is None else redact.call(i.tool_call),
        }
        for i in view.interrupts
        if i.id not in view.answers
    ]
    open_batch = None
    if view.pending is not None:
        results = view.pending[1]
        open_batch = [
            {**redact.call(c), "result": None if r is None else _block(r, redact)}
            for c, r in zip(calls, results, strict=True)
        ]
    lease = record.lease
    return {
        "session_id": record.session_id,
        "status": record.status,
        "version": record.version,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "lease_holder": lease.holder
        if lease is not None and lease.expires_at > time.time()
        else None,
        "waiting_for": waiting,
        "messages_total": len(view.messages),
        "messages": messages,
        "open_batch": open_batch,
    }


def _block(block: ContentBlock, redact: _Redacted) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": redact.scrub(block.text)}
    if block.type == "reasoning":
        text = "" if block.redacted else redact.scrub(block.text)
        return {"type": "reasoning", "text": text}
    if block.type == "tool_call":
        return redact.call(block)
    return {
        "type": "tool_result",
        "tool_call_id": block.tool_call_id,
        "name": block.name,
        "content": redact.scrub(block.content),
        "is_error": block.is_error,
        "status": block.status,
    }


def audit_json(r: AuditRecord) -> dict[str, Any]:
    return r.to_dict()


def verify_json(report: VerifyReport) -> dict[str, Any]:
    bad = report.first_bad
    return {
        "ok": report.ok,
        "checked": report.checked,
        "first_bad": None if bad is None else {"position": bad[0], "reason": bad[1]},
        "head": {"seq": report.head[0], "hash": report.head[1]},
    }
