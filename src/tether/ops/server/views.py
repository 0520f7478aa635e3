"""JSON views of approvals, sessions and audit records, as the server returns them.

Sessions and approvals are shown through the one redaction path,
:mod:`tether.governance.redaction` (the agent's redactor when the server has ``--app``,
the default secret mask always, the approval rows' masks, and a scrub of every hidden
string from all other text); these functions only turn its result into JSON.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tether.governance.redaction import redact_approval
from tether.ops.server.decision_body import actions

if TYPE_CHECKING:
    from tether.durable import Approval, SessionRecord
    from tether.durable.approvals import Redactor
    from tether.durable.audit import AuditRecord, VerifyReport
    from tether.durable.session_list import SessionStats
    from tether.governance.redaction import ShownSession
    from tether.messages import ContentBlock


def approval_json(
    a: Approval, *, can_decide: bool, now: float | None = None, redactor: Redactor | None = None
) -> dict[str, Any]:
    """An approval as approvers see it (arguments and reason were redacted when filed; the
    edited arguments go through the redaction again)."""
    out = redact_approval(a, redactor).to_dict()
    out["age_seconds"] = max(0.0, (time.time() if now is None else now) - a.requested_at)
    out["can_decide"] = can_decide
    out["takes_edits"] = a.source == "intervention" and a.tool is not None
    out["actions"] = actions(a)
    # a call a crash left in doubt started: its side effect may have happened already
    out["may_have_run"] = a.source == "in_doubt"
    out["links"] = session_links(a.session_id)
    return out


def session_links(session_id: str) -> dict[str, str]:
    """Where a session's timeline is: its JSON endpoint and the page that shows it."""
    from urllib.parse import quote

    sid = quote(session_id, safe="")
    return {"timeline": f"/api/timeline/{sid}", "page": f"/#timeline={sid}"}


def summary_json(s: SessionStats, now: float | None = None) -> dict[str, Any]:
    """One row of the sessions list."""
    now = time.time() if now is None else now
    return {
        "session_id": s.session_id,
        "status": s.status,
        "version": s.version,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "age_seconds": max(0.0, now - s.created_at),
        "idle_seconds": max(0.0, now - s.updated_at),
        "model_calls": s.model_calls,
        "tool_calls": s.tool_calls,
        "input_tokens": s.input_tokens,
        "output_tokens": s.output_tokens,
        "total_tokens": s.total_tokens,
        "cost": None if s.cost is None else str(s.cost),
        "pending_approvals": s.pending_approvals,
        "first_prompt": s.first_prompt,  # redacted by the store's listing; untrusted text
    }


def timeline_json(timeline: dict[str, Any], record: SessionRecord) -> dict[str, Any]:
    """The timeline of :func:`~tether.ops.timeline.build_timeline` plus who runs it now."""
    lease = record.lease
    running = lease is not None and lease.expires_at > time.time()
    return {**timeline, "lease_holder": lease.holder if running and lease else None}


def session_json(record: SessionRecord, shown: ShownSession, tail: int) -> dict[str, Any]:
    """Status, waiting interrupts and the last ``tail`` transcript messages of a session as
    :func:`~tether.governance.redaction.show_session` shows it (redacted, edits marked)."""
    view = shown.view
    messages = [
        {"role": m.role, "content": [_block(b, shown) for b in m.content]}
        for m in (view.messages[-tail:] if tail > 0 else [])
    ]
    waiting = [
        {
            "id": i.id,
            "name": i.name,
            "source": i.source,
            "reason": i.reason,
            "tool_call": None if i.tool_call is None else _block(i.tool_call, shown),
        }
        for i in view.interrupts
        if i.id not in view.answers
    ]
    open_batch = None
    if view.pending is not None:
        calls, results = view.pending
        open_batch = [
            {
                **_block(c, shown),
                "result": None if r is None else _block(r, shown),
                # started (intent journaled), no result saved: it may have run
                "in_doubt": r is None and c.id in view.intents,
            }
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


def _block(block: ContentBlock, shown: ShownSession) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "reasoning":
        return {"type": "reasoning", "text": "" if block.redacted else block.text}
    if block.type == "tool_call":
        edit = shown.edits.get(block.id)
        edited = None if edit is None else edit.json()  # the arguments that ran, who changed them
        return {
            "type": "tool_call",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
            "edited": edited,
        }
    return {
        "type": "tool_result",
        "tool_call_id": block.tool_call_id,
        "name": block.name,
        "content": block.content,
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
