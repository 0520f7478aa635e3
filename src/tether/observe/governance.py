"""Governance as span events: interrupts, answers and approvals, AGENT-HOOKS verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Span

from tether.observe import attributes as A

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.approval_types import Approval
    from tether.governance.masks import Masker
    from tether.observe.runs import RunSpans


def interrupt_attrs(interrupt: Interrupt) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "tether.interrupt.id": interrupt.id,
        "tether.interrupt.name": interrupt.name,
        "tether.interrupt.source": interrupt.source,
        "tether.interrupt.point": interrupt.point,
    }
    if interrupt.tool_call is not None:
        attrs[A.TOOL_NAME] = interrupt.tool_call.name
        attrs[A.TOOL_CALL_ID] = interrupt.tool_call.id
    return attrs


def approval_attrs(row: Approval) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "tether.approval.id": row.id,
        "tether.approval.status": row.status,
        "tether.approval.decision": str(row.decision),
        "tether.approval.edited": row.edited_args is not None,
    }
    if row.decided_by is not None:
        attrs["tether.approval.decided_by"] = row.decided_by
    if row.decided_at is not None:
        attrs["tether.approval.decided_at"] = row.decided_at
    return attrs


def answered(
    span: Span, saved: dict[str, Any], answers: dict[str, Any], rows: dict[str, Approval]
) -> None:
    """Events for the answers that let this resume go on (the approvals decided)."""
    from tether.control.audit import answer_kind

    for item in saved.get("interrupts") or ():
        if not isinstance(item, dict) or item.get("id") not in answers:
            continue
        source = item.get("source")
        name = "tether.in_doubt.settled" if source == "in_doubt" else "tether.interrupt.answered"
        attrs = {
            "tether.interrupt.id": str(item["id"]),
            "tether.interrupt.source": str(source),
            "tether.answer": answer_kind(answers[item["id"]]),
        }
        row = rows.get(item["id"])
        if row is not None:
            attrs.update(approval_attrs(row))
        span.add_event(name, attrs)


def agent_hooks_event(run: RunSpans, record: Any, masker: Masker) -> str:
    """Add one AGENT-HOOKS InterceptionRecord (payload-free) as an event on the span it
    judged (the chat or tool span, else the invocation span); return its point."""
    point: str = record.interception_point.value
    span = run.span
    if point.endswith("model_call") and run.chat is not None:
        span = run.chat
    elif point.endswith("tool_call") and len(run.tools) == 1:
        span = next(iter(run.tools.values())).span
    verdict = record.verdict
    attrs: dict[str, Any] = {
        "tether.agent_hooks.point": point,
        "tether.agent_hooks.decision": verdict.decision.value,
        "tether.agent_hooks.session_id": record.session_id,
        "tether.agent_hooks.sequence": record.sequence,
        "tether.agent_hooks.proceeds": record.proceeds,
    }
    optional = {
        "tether.agent_hooks.reason": None
        if verdict.reason is None
        else masker.text(verdict.reason),
        "tether.agent_hooks.decided_by": record.decided_by,
        "tether.agent_hooks.input_identity": record.input_identity,
        "tether.agent_hooks.enforced_identity": record.enforced_identity,
    }
    attrs.update({k: v for k, v in optional.items() if v is not None})
    span.add_event("tether.agent_hooks.verdict", attrs)
    return point


def verdict_span(run: RunSpans, point: str, event: Any) -> Span:
    """The span an intervention's verdict at ``point`` is about."""
    call = getattr(event, "tool_call", None)
    if point.endswith("tool_call") and call is not None:
        found = run.tools.get(call.id)
        if found is not None:
            return found.span
    if point == "after_model_call" and run.chat is not None:
        return run.chat
    return run.span
