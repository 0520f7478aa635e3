"""The approval rules: what ``store.approvals`` does on top of its rows.

A store keeps the rows and their primitives (:class:`tether.durable.approvals.
ApprovalsBase`); the rules here decide what a row may say: a request files the question
as a person may see it, a decision is refused when the session's journal shows the
interrupt answered another way, an edit is checked by the one edit rule
(:func:`tether.governance.edits.check_edit`) and stored only as shown, and
``answers_for`` turns decided rows into ``agent.resume`` answers. :class:`Rules` is
installed into every store by ``tether/__init__.py`` (:mod:`tether.durable.rules`), so
the masking and redaction modules load on first use, not with ``import tether``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import (
    DEFAULT_TTL,
    Approval,
    ApprovalConflict,
    ApprovalError,
    ApprovalStale,
    Decision,
    ExpiryAction,
    Redactor,
    args_sha256,
    canonical,
    new_approval_id,
)
from tether.errors import AnswerError, ConfigurationError

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.audit import AuditEvent
    from tether.durable.rules import ApprovalRows
    from tether.session import SessionView

__all__ = ["Rules", "prepare_request", "shown_interrupt"]


class Rules:
    """The approval rules and the listing's prompt redaction, for every store
    (:class:`tether.durable.rules.StoreRules`); ``rows``: the store's ``approvals``."""

    async def request(
        self,
        rows: ApprovalRows,
        session_id: str,
        interrupt: Interrupt,
        *,
        redactor: Redactor | None = None,
        ttl: float | None = DEFAULT_TTL,
        on_expiry: ExpiryAction = "deny",
        server: str | None = None,
    ) -> Approval:
        return await rows.insert(
            *prepare_request(
                session_id,
                interrupt,
                redactor=redactor,
                ttl=ttl,
                on_expiry=on_expiry,
                server=server,
            )
        )

    async def decide(
        self,
        rows: ApprovalRows,
        approval_id: str,
        decision: Decision,
        *,
        decided_by: str,
        note: str | None = None,
        edited_args: dict[str, Any] | None = None,
        response: Any = None,
        validate: Any = None,
        redactor: Redactor | None = None,
    ) -> Approval:
        """See :meth:`tether.durable.approvals.ApprovalsBase.decide`."""
        from tether.durable.audit import AuditEvent
        from tether.governance.redaction import edits_to_store, redactor_of

        if decision not in ("approve", "deny", "respond"):
            raise AnswerError(f"decision must be 'approve', 'deny' or 'respond', got {decision!r}")
        if not decided_by:
            raise AnswerError("decided_by must name the approver")
        current = await rows.get(approval_id)
        if current.status != "pending":
            raise ApprovalConflict(current)
        # An unreadable journal cannot show the interrupt answered: the row decides (as
        # before the check); an edit still needs the journal (below, it refuses).
        view = await _view(rows, current.session_id, strict=edited_args is not None)
        if view is not None and current.interrupt_id in view.answers:
            raise ApprovalStale(current)
        kind: str = decision
        if edited_args is not None:
            if decision != "approve":
                raise AnswerError("edited arguments go with an 'approve' decision")
            if current.source != "intervention" or current.tool is None:
                raise AnswerError(
                    f"approval {approval_id} ({current.source} interrupt {current.name!r}) does "
                    "not take edited arguments; only a Confirm before a tool call does"
                )
            if not isinstance(edited_args, dict):
                raise AnswerError("edited arguments must be a JSON object")
            edited_args = edits_to_store(current, edited_args, redactor or redactor_of(validate))
            if validate is not None:
                interrupt = _waiting_in(view, current)
                full = {**_real_in(interrupt, current), **edited_args}
                await _check_edit(validate, interrupt, current.tool, full)
            kind = "approve_edited" if edited_args else "approve"
            edited_args = edited_args or None  # every key as shown: a plain approval
        canonical(response)  # must be JSON
        runs = _runs_sha256(view, current, kind, edited_args)
        decided = replace(
            current,
            status="denied" if decision == "deny" else "approved",
            decided_by=decided_by,
            decided_at=time.time(),
            decision=kind,
            edited_args=edited_args,
            response=response if decision == "respond" else None,
            note=note,
        )
        audit = AuditEvent(
            "approval.decided",
            {
                "approval_id": approval_id,
                "interrupt_id": current.interrupt_id,
                "decision": kind,
                "decided_by": decided_by,
                "edited_args_sha256": None if edited_args is None else args_sha256(edited_args),
                "runs_args_sha256": runs,
                "note": note,
            },
            current.session_id,
        )
        return await rows.write_decision(decided, audit)

    async def real_arguments(self, rows: ApprovalRows, approval: Approval) -> dict[str, Any]:
        view = await _view(rows, approval.session_id)
        return _real_in(_waiting_in(view, approval), approval)

    async def answers_for(self, rows: ApprovalRows, session_id: str) -> dict[str, Any]:
        waiting = _pending_in(await _view(rows, session_id))
        # oldest first: an id asked again (in doubt after a retry) answers by its last row
        newest: dict[str, Approval] = {}
        for approval in await rows.find(session_id=session_id, limit=10_000):
            newest[approval.interrupt_id] = approval
        out: dict[str, Any] = {}
        for interrupt_id, approval in newest.items():
            if approval.status == "pending" or interrupt_id not in waiting:
                continue
            out[interrupt_id] = await self.response_of(rows, approval)
        return out

    async def response_of(self, rows: ApprovalRows, approval: Approval) -> Any:
        decision = approval.decision
        if approval.status == "expired":
            decision = approval.on_expiry
        if decision == "respond":
            return approval.response
        approved = decision in ("approve", "approve_edited")
        if approval.source == "in_doubt":
            return "retry" if approved else "abort"
        if decision == "approve_edited":
            real = await self.real_arguments(rows, approval)
            full = {**real, **(approval.edited_args or {})}
            return {"approved": True, "args": full, "reason": approval.note}
        if approved:
            return True
        who = approval.decided_by or "an approver"
        return {"approved": False, "reason": approval.note or f"denied by {who}"}

    def shown_prompt(
        self, text: str | None, calls: Iterable[dict[str, Any]], approvals: Iterable[Approval]
    ) -> str | None:
        from tether.governance.session_prompt import shown_prompt

        return shown_prompt(text, calls, approvals)


def prepare_request(
    session_id: str,
    interrupt: Interrupt,
    *,
    redactor: Redactor | None = None,
    ttl: float | None = DEFAULT_TTL,
    on_expiry: ExpiryAction = "deny",
    server: str | None = None,
) -> tuple[Approval, AuditEvent]:
    """The approval ``store.approvals.request`` files for ``interrupt``, and its
    ``approval.requested`` record, built without writing (a journal append can carry them).
    ``server``: the MCP server (or other source) of the interrupted call's tool."""
    from tether.durable.audit import AuditEvent

    if on_expiry not in ("deny", "approve"):
        raise ConfigurationError(f"on_expiry must be 'deny' or 'approve', got {on_expiry!r}")
    call = interrupt.tool_call
    real = dict(call.arguments) if call is not None else {}
    shown, reason = shown_interrupt(interrupt, redactor)
    now = time.time()
    approval = Approval(
        id=new_approval_id(),
        session_id=session_id,
        interrupt_id=interrupt.id,
        source=interrupt.source,
        name=interrupt.name,
        tool=call.name if call is not None else None,
        arguments=shown,
        args_sha256=args_sha256(real) if call is not None else None,
        reason=reason,
        requested_at=now,
        expires_at=None if ttl is None else now + ttl,
        on_expiry=on_expiry,
        server=server,
    )
    audit = AuditEvent(
        "approval.requested",
        {
            "approval_id": approval.id,
            "interrupt_id": interrupt.id,
            "source": interrupt.source,
            "tool": approval.tool,
            "args_sha256": approval.args_sha256,
            "expires_at": approval.expires_at,
        }
        | ({} if server is None else {"server": server}),
        session_id,
    )
    return approval, audit


def shown_interrupt(
    interrupt: Interrupt, redactor: Redactor | None = None
) -> tuple[dict[str, Any], Any]:
    """The question as a person may see it, wherever it is shown (the approval row, an MCP
    host's elicitation): the call's arguments through the one redaction path, then the
    arguments and the reason scrubbed of every string a mask hid (in this call; with a
    :class:`~tether.governance.masks.Scrubbing` redactor, anywhere in the agent tree) and
    of secret-looking tokens."""
    from tether.governance.masks import Masker, Scrubbing, hidden_strings, shown_arguments

    call = interrupt.tool_call
    real = dict(call.arguments) if call is not None else {}
    tree: set[str] = set()
    if isinstance(redactor, Scrubbing):  # a row filed in a tree: the tree's secrets too
        tree, redactor = redactor.hidden, redactor.redactor
    shown = shown_arguments(call.name if call else None, real, redactor)
    hidden: set[str] = set()
    hidden_strings(real, shown, hidden)  # learned before the scrub (a quote is no secret)
    masker = Masker(None, {}, hidden | tree)
    return masker.scrub(shown), masker.scrub(interrupt.reason)


async def _view(rows: ApprovalRows, session_id: str, *, strict: bool = True) -> SessionView | None:
    """The fold of the session's journal; not ``strict``: None when it cannot be read
    (a corrupt entry), for checks that then cannot apply."""
    from tether.durable.errors import CorruptEntry
    from tether.session import fold

    try:
        record = await rows.load_session(session_id)
    except CorruptEntry:
        if strict:
            raise
        return None
    return None if record is None else fold(record)


def _runs_sha256(
    view: SessionView | None, current: Approval, kind: str, edited: dict[str, Any] | None
) -> str | None:
    """The hash of the arguments an approved tool call will run with (the call after the
    policies ahead of its Confirm, edits merged), for ``approval.decided``; None for
    other decisions, or when the session's journal does not hold the call."""
    if current.tool is None or kind not in ("approve", "approve_edited"):
        return None
    if not edited:
        return current.args_sha256
    interrupt = _pending_in(view, running=True).get(current.interrupt_id)
    if interrupt is None or interrupt.tool_call is None:
        return None
    return args_sha256({**_real_in(interrupt, current), **edited})


def _real_in(interrupt: Interrupt, approval: Approval) -> dict[str, Any]:
    assert interrupt.tool_call is not None
    real = dict(interrupt.tool_call.arguments)
    if args_sha256(real) != approval.args_sha256:
        raise ApprovalError(
            f"approval {approval.id}: the arguments in session {approval.session_id!r} do "
            "not match the ones approvers were shown (hash mismatch); refusing"
        )
    return real


def _waiting_in(view: SessionView | None, approval: Approval) -> Interrupt:
    """The tool-call interrupt the approval's session is still waiting for."""
    interrupt = _pending_in(view, running=True).get(approval.interrupt_id)
    if interrupt is None or interrupt.tool_call is None:
        raise ApprovalError(
            f"approval {approval.id}: session {approval.session_id!r} is no longer waiting "
            f"for interrupt {approval.interrupt_id}"
        )
    return interrupt


def _pending_in(view: SessionView | None, *, running: bool = False) -> dict[str, Interrupt]:
    """The interrupts a session's view still waits for (none unless it is suspended;
    ``running``: also those a running targeted resume holds, for an edit decided while it
    runs. Not for ``answers_for``: a crashed run's held in-doubt calls are asked again)."""
    if view is None or view.status not in (("suspended", "running") if running else ("suspended",)):
        return {}
    return {i.id: i for i in view.interrupts if i.id not in view.answers}


async def _check_edit(validate: Any, interrupt: Interrupt, tool: str, full: dict[str, Any]) -> None:
    """Apply ``validate`` to the merged call: an Agent (anything with ``tool_map``) through
    the one edit rule (:func:`tether.governance.edits.check_edit`), else a ``Validator``."""
    if getattr(validate, "tool_map", None) is not None:
        from tether.governance.edits import check_edit

        await check_edit(validate, interrupt, full, inbox=True)
        return
    outcome = validate(tool, full)
    if inspect.isawaitable(outcome):
        await outcome
