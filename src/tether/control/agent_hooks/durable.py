"""Durable escalation (a tether extension outside the AGENT-HOOKS contract).

:class:`DurableApprovals` is an ``ApprovalResolver``: when the emitter consults
it for a liftable deny (an *escalate*) at ``pre_tool_call`` and no decision is
recorded yet, it raises a tether interrupt through the BeforeToolCall event
(``event.interrupt``): the run suspends and, with a store, the request is
journaled so any process can answer it. On ``agent.resume({id: decision})`` the
same emission runs again and the recorded decision is answered to the emitter
(echoing the identity of the context it was asked about now).

Decisions are keyed on the tool call id plus a hash of its arguments: the
jcs-sha256 identity covers sequence and timestamp, so it changes on replay.
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

if TYPE_CHECKING:
    from tether.control.events import BeforeModelCall, BeforeToolCall

CURRENT_EVENT: ContextVar[BeforeToolCall | BeforeModelCall | None] = ContextVar(
    "tether_agent_hooks_event", default=None
)
"""The hook event whose emission is running (set by the host around pre_* emissions)."""

INTERRUPT_PREFIX = "agent-hooks:approval"


def args_hash(arguments: dict[str, Any]) -> str:
    """A stable hash of tool arguments (sorted-key compact JSON, SHA-256)."""
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
        digest = args_hash(dict(call.arguments))
        question = {
            "tool_call_id": call.id,
            "tool": call.name,
            "args_sha256": digest,
            "reason": request.verdict.reason,
            "point": request.interception_point.value,
        }
        # Raises InterruptSignal (a BaseException: it passes through the emitter)
        # the first time; returns the recorded answer after resume.
        answer = event.interrupt(f"{INTERRUPT_PREFIX}:{call.id}:{digest[:16]}", question)
        approved, code, note = _decision(answer, call.id, digest)
        if approved:
            return ApprovalResolution(ApprovalOutcome.APPROVE, identity, Verdict.allow())
        verdict = Verdict.deny(reason=code, message=note)
        return ApprovalResolution(ApprovalOutcome.REJECT, identity, verdict)


def _decision(answer: Any, call_id: str, digest: str) -> tuple[bool, str, str | None]:
    """(approved, reason code, the approver's note)."""
    if answer is True or answer == "approve":
        return True, "", None
    if answer is False or answer == "deny":
        return False, "tether:approval_rejected", None
    if isinstance(answer, dict) and isinstance(answer.get("approved"), bool):
        if answer.get("tool_call_id", call_id) != call_id:
            return False, "tether:approval_for_another_call", None
        if answer.get("args_sha256", digest) != digest:
            return False, "tether:approval_for_other_arguments", None
        note = answer.get("reason")
        note = None if note is None else str(note)
        return answer["approved"], "tether:approval_rejected", note
    return False, "tether:approval_answer_invalid", None
