"""Durable escalation (a tether extension outside the AGENT-HOOKS contract).

:class:`DurableApprovals` is an ``ApprovalResolver``: when the emitter consults
it for a liftable deny (an *escalate*) at ``pre_tool_call`` and no decision is
recorded yet, it raises a tether interrupt through the BeforeToolCall event
(``event.interrupt``): the run suspends and, with a store, the request is
journaled so any process can answer it. On ``agent.resume({id: decision})`` the
same emission runs again and the recorded decision is answered to the emitter
(echoing the identity of the context it was asked about now).

Decisions are keyed on the tool call id plus a hash of its arguments: the
jcs-sha256 identity covers sequence and timestamp, so it changes on replay. The
hash is :func:`tether.durable.args_sha256`, the one the approval rows (and so
``tether approvals show``) carry: a digest copied from the inbox is accepted here.
"""

from __future__ import annotations

import hashlib
import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from agent_hooks import (
    ApprovalOutcome,
    ApprovalRequest,
    ApprovalResolution,
    ApprovalResolver,
    Verdict,
)

from tether.control.interrupts import InterruptSignal
from tether.durable.approval_types import args_sha256

if TYPE_CHECKING:
    from tether.control.events import BeforeModelCall, BeforeToolCall

CURRENT_EVENT: ContextVar[BeforeToolCall | BeforeModelCall | None] = ContextVar(
    "tether_agent_hooks_event", default=None
)
"""The hook event whose emission is running (set by the host around pre_* emissions)."""

INTERRUPT_PREFIX = "agent-hooks:approval"


args_hash = args_sha256
"""The hash escalations key on: :func:`tether.durable.args_sha256` (the old name)."""


def _legacy_hash(arguments: dict[str, Any]) -> str:
    """The hash escalations used before they shared ``args_sha256`` (ASCII-escaped JSON).

    Read only, so a session suspended before the change still finds its answer and
    accepts the digest its question carried; it differs only for non-ASCII arguments.
    """
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class DurableApprovals:
    """Resolve escalations with a durable tether interrupt (see the module docstring).

    ``fallback`` (another resolver) answers escalations at points that cannot
    suspend (anything but ``pre_tool_call``); without one those stay unresolved
    and the deny stands (fail closed). Answers: ``True``/``"approve"``,
    ``False``/``"deny"``, or ``{"approved": bool, "reason": str}``; an answer that
    names another call (``tool_call_id`` / ``args_sha256`` that do not match) is
    a rejection.
    """

    def __init__(self, fallback: ApprovalResolver | None = None) -> None:
        self.fallback = fallback

    def resolve(self, request: ApprovalRequest) -> Any:
        from tether.control.events import BeforeToolCall

        event = CURRENT_EVENT.get()
        identity = request.context_identity
        if not isinstance(event, BeforeToolCall) or event.interrupter is None:
            if self.fallback is not None:
                return self.fallback.resolve(request)
            return ApprovalResolution(ApprovalOutcome.UNRESOLVED, identity)
        call = event.tool_call
        arguments = dict(call.arguments)
        digest = args_sha256(arguments)
        legacy = _legacy_hash(arguments)
        question = {
            "tool_call_id": call.id,
            "tool": call.name,
            "args_sha256": digest,
            "reason": request.verdict.reason,
            "point": request.interception_point.value,
        }
        # Raises InterruptSignal (a BaseException: it passes through the emitter)
        # the first time; returns the recorded answer after resume.
        answer = _recorded(event, call.id, legacy, digest, question)
        approved, code, note = _decision(answer, call.id, {digest, legacy})
        if approved:
            return ApprovalResolution(ApprovalOutcome.APPROVE, identity, Verdict.allow())
        verdict = Verdict.deny(reason=code, message=note)
        return ApprovalResolution(ApprovalOutcome.REJECT, identity, verdict)


def _recorded(
    event: BeforeToolCall, call_id: str, legacy: str, digest: str, question: dict[str, Any]
) -> Any:
    """The answer recorded for this escalation, else raise its interrupt.

    A session suspended before escalations shared ``args_sha256`` named its interrupt
    with the legacy hash (different only for non-ASCII arguments): its answer counts.
    """
    if legacy != digest:
        try:
            return event.interrupt(f"{INTERRUPT_PREFIX}:{call_id}:{legacy[:16]}", question)
        except InterruptSignal:
            pass  # no answer under the old name: ask under the current one
    return event.interrupt(f"{INTERRUPT_PREFIX}:{call_id}:{digest[:16]}", question)


def _decision(answer: Any, call_id: str, digests: set[str]) -> tuple[bool, str, str | None]:
    """(approved, reason code, the approver's note); ``digests``: the hashes of this
    call's arguments an answer may name (the current one, and the legacy one a
    question asked before the change carried)."""
    if answer is True or answer == "approve":
        return True, "", None
    if answer is False or answer == "deny":
        return False, "tether:approval_rejected", None
    if isinstance(answer, dict) and isinstance(answer.get("approved"), bool):
        if answer.get("tool_call_id", call_id) != call_id:
            return False, "tether:approval_for_another_call", None
        if answer.get("args_sha256", next(iter(digests))) not in digests:
            return False, "tether:approval_for_other_arguments", None
        note = answer.get("reason")
        note = None if note is None else str(note)
        return answer["approved"], "tether:approval_rejected", note
    return False, "tether:approval_answer_invalid", None
