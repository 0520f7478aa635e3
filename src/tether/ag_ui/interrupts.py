"""tether interrupts as AG-UI ``Interrupt`` objects, and AG-UI ``resume`` entries as the
answers ``agent.resume`` takes.

An interrupt keeps its tether id (a resume entry answers it by that id); ``reason`` is
its name, ``message`` its question, ``tool_call_id`` the call it is about, and the call's
arguments (redacted: :func:`~tether.governance.approvals.shown_interrupt`) travel in
``metadata["tether"]`` with the source and the tool. A ``resolved`` entry answers with
its payload (a Confirm: no payload approves); a ``cancelled`` entry denies (an in-doubt
call: ``abort``).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, Final

from ag_ui.core import Interrupt as AgUiInterrupt

from tether.ag_ui.events import subagent_of
from tether.errors import AnswerError
from tether.governance.approvals import shown_interrupt

if TYPE_CHECKING:
    from ag_ui.core import ResumeEntry

    from tether.control.interrupts import Interrupt
    from tether.durable.approval_types import Approval, Redactor
    from tether.governance.masks import Masker
    from tether.messages import JSONValue

FRONTEND: Final = "frontend_tool"
"""The interrupt name a front-end tool's call suspends with (frontend.py)."""

CONFIRM_SCHEMA: Final[dict[str, Any]] = {
    "description": "approve or deny the call; args: the whole call as it will run",
    "oneOf": [
        {"type": "boolean"},
        {"enum": ["approve", "deny"]},
        {
            "type": "object",
            "properties": {
                "approved": {"type": "boolean"},
                "reason": {"type": "string"},
                "args": {"type": "object"},
            },
            "required": ["approved"],
        },
    ],
}
IN_DOUBT_SCHEMA: Final[dict[str, Any]] = {
    "description": "a call a crash left in doubt: run it again, abort it, or give its result",
    "oneOf": [
        {"enum": ["retry", "abort"]},
        {
            "type": "object",
            "properties": {"skip": {"const": True}, "result": {"type": "string"}},
            "required": ["skip", "result"],
        },
    ],
}


def is_frontend(interrupt: Interrupt) -> bool:
    """Whether ``interrupt`` is a front-end tool call waiting for its result message."""
    return interrupt.source == "tool" and interrupt.name == FRONTEND


def to_ag_ui(
    interrupt: Interrupt,
    masker: Masker,
    redactor: Redactor | None,
    row: Approval | None,
) -> AgUiInterrupt:
    """``interrupt`` as an AG-UI Interrupt (``row``: its approval row, for the expiry)."""
    shown, reason = shown_interrupt(interrupt, redactor)
    call = interrupt.tool_call
    message = reason if isinstance(reason, str) else None
    expires = None
    if row is not None and row.expires_at is not None:
        expires = datetime.datetime.fromtimestamp(row.expires_at, datetime.UTC).isoformat()
    return AgUiInterrupt(
        id=interrupt.id,
        reason=interrupt.name,
        message=None if message is None else masker.scrub(message),
        tool_call_id=None if call is None else call.id,
        response_schema=_schema(interrupt),
        expires_at=expires,
        subagent_run_id=subagent_of(interrupt),
        metadata={
            "tether": {
                "source": interrupt.source,
                "point": interrupt.point,
                "reason": masker.scrub(reason),
                "tool": None if call is None else call.name,
                "arguments": None if call is None else masker.scrub(shown),
            }
        },
    )


def _schema(interrupt: Interrupt) -> dict[str, Any] | None:
    if interrupt.source == "intervention":
        return CONFIRM_SCHEMA
    if interrupt.source == "in_doubt":
        return IN_DOUBT_SCHEMA
    if interrupt.name.rpartition("/")[2] == "clarify":
        return {"type": "string", "description": "the answer to the question"}
    return None  # a tool's or a hook's own question: any JSON value


def answers(entries: list[ResumeEntry], pending: dict[str, Interrupt]) -> dict[str, JSONValue]:
    """The ``agent.resume`` answers of ``entries``; AnswerError naming every id that is
    not a pending interrupt of the thread (then nothing is answered)."""
    unknown = [e.interrupt_id for e in entries if e.interrupt_id not in pending]
    if unknown:
        shown = ", ".join(repr(i[:80]) for i in unknown[:10])
        raise AnswerError(
            f"resume names {len(unknown)} interrupt(s) this thread is not waiting on: {shown}; "
            f"pending: {', '.join(sorted(pending)) or '(none)'}"
        )
    seen: set[str] = set()
    out: dict[str, JSONValue] = {}
    for entry in entries:
        if entry.interrupt_id in seen:
            raise AnswerError(f"resume answers interrupt {entry.interrupt_id!r} twice")
        seen.add(entry.interrupt_id)
        out[entry.interrupt_id] = _answer(pending[entry.interrupt_id], entry)
    return out


def _answer(interrupt: Interrupt, entry: ResumeEntry) -> JSONValue:
    if is_frontend(interrupt):
        raise AnswerError(
            f"interrupt {interrupt.id!r} is a front-end tool call: answer it with a tool "
            "message (role 'tool', toolCallId "
            f"{interrupt.tool_call.id if interrupt.tool_call else '?'!r}), not a resume entry"
        )
    cancelled = entry.status == "cancelled"
    if interrupt.source == "in_doubt":
        return "abort" if cancelled else entry.payload
    if interrupt.source == "intervention":
        if cancelled:
            return "deny"
        return "approve" if entry.payload is None else entry.payload
    return "deny" if cancelled else entry.payload
