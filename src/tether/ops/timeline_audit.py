"""The audit log's part of a timeline: its records attached to the rows they describe,
and each intervention verdict as a row of its own, placed right before its tool call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tether.ops.timeline_step import Step

if TYPE_CHECKING:
    from tether.durable.audit import AuditRecord
    from tether.ops.timeline_rows import RowBuilder

AUDIT_FIELDS: Final = ("point", "policy", "action", "tool", "call_id", "stop_reason")
"""Audit-log fields a viewer sees in the timeline (payload-free; the auditor's view has all)."""


def place_audit(b: RowBuilder, records: list[AuditRecord]) -> None:
    """Attach ``records`` to the rows of ``b`` (tool calls, approvals, interrupts), add
    a row per verdict, and put all rows in time order."""
    by_approval = {s.approval_id: s for s in b.steps if s.approval_id}
    verdicts: list[Step] = []
    for r in records:
        data = r.data
        if r.event == "tool.executed":
            step = b.tools.get(str(data.get("call_id")))
            if step is not None:
                step.audit.append(r.seq)
                step.detail["duration_ms"] = data.get("duration_ms")
        elif r.event.startswith("approval."):
            step = by_approval.get(str(data.get("approval_id")))
            if step is not None:
                step.audit.append(r.seq)
        elif r.event.startswith("interrupt."):
            step = b.interrupts.get(str(data.get("interrupt_id")))
            if step is not None:
                step.audit.append(r.seq)
        elif r.event == "policy.verdict":
            action = str(data.get("action"))
            title = f"verdict: {action} by {data.get('policy')}"
            order: float = len(b.steps) + len(verdicts)
            at = r.at
            judged = b.tools.get(str(data.get("call_id")))
            if judged is not None and at >= judged.start:
                # audit records commit with the step they describe (the call's intent):
                # the verdict came first, so it goes right before the call's row
                at, order = judged.start, judged.order - 0.5
            step = Step("verdict", title, at, at, order, call_id=data.get("call_id"))
            step.status = "denied" if action.lower() == "deny" else "ok"
            step.detail = {k: b.scrub(data.get(k)) for k in AUDIT_FIELDS if k in data}
            step.audit.append(r.seq)
            verdicts.append(step)
    b.steps.extend(verdicts)
    # in time order: a tool call's row moves to its intent (after a wait for a human),
    # a verdict (timed by the audit log) lands between the model call and the tool
    b.steps.sort(key=lambda s: (s.start, s.order))
