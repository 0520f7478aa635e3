"""Approvals: one row per durable interrupt that asks a human, listable across sessions.

The store-independent part lives here (the request / decide rules and ``answers_for``);
each store implements the few transactional primitives of :class:`ApprovalsBase` (see
``memory_ops.py``, ``sqlite_ops.py``, ``postgres_ops.py``). Records, errors and the
redactor are in ``approval_types.py`` and re-exported here.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from tether.durable.approval_types import (
    APPROVAL_SOURCES,
    DEFAULT_TTL,
    Approval,
    ApprovalConflict,
    ApprovalError,
    ApprovalNotFound,
    ApprovalStale,
    ApprovalStatus,
    Decision,
    ExpiryAction,
    Redactor,
    Validator,
    _hidden_strings,
    _scrub,
    args_sha256,
    canonical,
    new_approval_id,
    redact_secrets,
)
from tether.durable.redaction import edits_to_store, redactor_of, shown_arguments
from tether.errors import AnswerError, ConfigurationError

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.audit import AuditEvent
    from tether.durable.store import Store
    from tether.session import SessionView

__all__ = [
    "APPROVAL_SOURCES",
    "DEFAULT_TTL",
    "Approval",
    "ApprovalConflict",
    "ApprovalError",
    "ApprovalNotFound",
    "ApprovalStale",
    "ApprovalStatus",
    "Approvals",
    "ApprovalsBase",
    "Decision",
    "ExpiryAction",
    "Redactor",
    "Validator",
    "args_sha256",
    "redact_secrets",
]


class Approvals(Protocol):
    """``store.approvals``: see :class:`ApprovalsBase` for each method."""

    async def request(
        self,
        session_id: str,
        interrupt: Interrupt,
        *,
        redactor: Redactor | None = None,
        ttl: float | None = DEFAULT_TTL,
        on_expiry: ExpiryAction = "deny",
        server: str | None = None,
    ) -> Approval: ...
    async def pending(
        self,
        session_id: str | None = None,
        tool: str | None = None,
        older_than: float | None = None,
        limit: int = 100,
    ) -> list[Approval]: ...
    async def find(
        self,
        *,
        session_id: str | None = None,
        status: ApprovalStatus | None = None,
        tool: str | None = None,
        limit: int = 100,
    ) -> list[Approval]: ...
    async def get(self, approval_id: str) -> Approval: ...
    async def decide(
        self,
        approval_id: str,
        decision: Decision,
        *,
        decided_by: str,
        note: str | None = None,
        edited_args: dict[str, Any] | None = None,
        response: Any = None,
        validate: Any = None,
        redactor: Redactor | None = None,
    ) -> Approval: ...
    async def expire_due(self, now: float | None = None) -> list[Approval]: ...
    async def answers_for(self, session_id: str) -> dict[str, Any]: ...


class ApprovalsBase:
    """The approval rules on top of four store primitives (``_insert``, ``_query``,
    ``_decide``, ``_expire``), each one transaction that also appends its audit records."""

    def __init__(self, store: Store) -> None:
        self._store = store

    # -- store primitives --------------------------------------------------------------

    async def _insert(self, approval: Approval, audit: AuditEvent) -> Approval:
        """Insert unless a pending approval exists for (session, interrupt): return that one."""
        raise NotImplementedError

    async def _query(
        self,
        *,
        approval_id: str | None = None,
        session_id: str | None = None,
        status: str | None = None,
        tool: str | None = None,
        before: float | None = None,
        limit: int = 100,
    ) -> list[Approval]:
        raise NotImplementedError

    async def _decide(self, decided: Approval, audit: AuditEvent) -> Approval:
        """Write ``decided`` if the row is still pending and unexpired (else ApprovalConflict)
        and mark the session ``ready`` when no approval of it is pending: one transaction."""
        raise NotImplementedError

    async def _expire(self, now: float) -> list[Approval]:
        raise NotImplementedError

    # -- API --------------------------------------------------------------------------

    async def request(
        self,
        session_id: str,
        interrupt: Interrupt,
        *,
        redactor: Redactor | None = None,
        ttl: float | None = DEFAULT_TTL,
        on_expiry: ExpiryAction = "deny",
        server: str | None = None,
    ) -> Approval:
        """The approval for ``interrupt`` (idempotent while it is pending). Its arguments are
        stored as shown: ``redactor``'s output with the default secret mask on top.
        ``server``: the MCP server (or other source) of the tool, shown to approvers."""
        return await self._insert(
            *prepare_request(
                session_id,
                interrupt,
                redactor=redactor,
                ttl=ttl,
                on_expiry=on_expiry,
                server=server,
            )
        )

    async def pending(
        self,
        session_id: str | None = None,
        tool: str | None = None,
        older_than: float | None = None,
        limit: int = 100,
    ) -> list[Approval]:
        """Pending approvals, oldest first; ``older_than`` in seconds of age."""
        before = None if older_than is None else time.time() - older_than
        return await self._query(
            session_id=session_id, status="pending", tool=tool, before=before, limit=limit
        )

    async def find(
        self,
        *,
        session_id: str | None = None,
        status: ApprovalStatus | None = None,
        tool: str | None = None,
        limit: int = 100,
    ) -> list[Approval]:
        """Approvals in any status, oldest first; every filter applies before ``limit``."""
        return await self._query(session_id=session_id, status=status, tool=tool, limit=limit)

    async def get(self, approval_id: str) -> Approval:
        found = await self._query(approval_id=approval_id, limit=1)
        if not found:
            raise ApprovalNotFound(approval_id)
        return found[0]

    async def decide(
        self,
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
        """Record a decision (first one wins: a later one raises :class:`ApprovalConflict`)
        and, in the same transaction, mark the session ``ready`` when nothing of it is pending.

        ``edited_args`` (approve only, Confirm interrupts only) are merged over the
        arguments that will run (the call after every policy ahead of the Confirm).
        ``validate`` (an Agent, or a ``Validator``) checks the merged call first: with an
        Agent, the one edit rule (``tether.agents.edits.check_edit``: the tool's schema, and
        the policies ahead of the Confirm would neither rewrite nor deny it); ``agent.resume``
        applies it again anyway. A row whose interrupt the session's journal shows answered
        (another path answered it) is refused with :class:`ApprovalStale`, nothing recorded.
        """
        from tether.durable.audit import AuditEvent

        if decision not in ("approve", "deny", "respond"):
            raise AnswerError(f"decision must be 'approve', 'deny' or 'respond', got {decision!r}")
        if not decided_by:
            raise AnswerError("decided_by must name the approver")
        current = await self.get(approval_id)
        if current.status != "pending":
            raise ApprovalConflict(current)
        # An unreadable journal cannot show the interrupt answered: the row decides (as
        # before the check); an edit still needs the journal (below, it refuses).
        view = await self._view(current.session_id, strict=edited_args is not None)
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
                interrupt = self._waiting_in(view, current)
                full = {**self._real_in(interrupt, current), **edited_args}
                await _check_edit(validate, interrupt, current.tool, full)
            kind = "approve_edited" if edited_args else "approve"
            edited_args = edited_args or None  # every key as shown: a plain approval
        canonical(response)  # must be JSON
        runs = self._runs_sha256(view, current, kind, edited_args)
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
        return await self._decide(decided, audit)

    def _runs_sha256(
        self,
        view: SessionView | None,
        current: Approval,
        kind: str,
        edited: dict[str, Any] | None,
    ) -> str | None:
        """The hash of the arguments an approved tool call will run with (the call after the
        policies ahead of its Confirm, edits merged), for ``approval.decided``; None for
        other decisions, or when the session's journal does not hold the call."""
        if current.tool is None or kind not in ("approve", "approve_edited"):
            return None
        if not edited:
            return current.args_sha256
        interrupt = _pending_in(view).get(current.interrupt_id)
        if interrupt is None or interrupt.tool_call is None:
            return None
        return args_sha256({**self._real_in(interrupt, current), **edited})

    async def expire_due(self, now: float | None = None) -> list[Approval]:
        """Resolve pending approvals past their expiry by their expiry action."""
        return await self._expire(time.time() if now is None else now)

    async def real_arguments(self, approval: Approval) -> dict[str, Any]:
        """The arguments the approval's call will run with (after the policies ahead of its
        Confirm), read from the session journal; refused when they no longer hash to
        ``args_sha256``."""
        view = await self._view(approval.session_id)
        return self._real_in(self._waiting_in(view, approval), approval)

    @staticmethod
    def _real_in(interrupt: Interrupt, approval: Approval) -> dict[str, Any]:
        assert interrupt.tool_call is not None
        real = dict(interrupt.tool_call.arguments)
        if args_sha256(real) != approval.args_sha256:
            raise ApprovalError(
                f"approval {approval.id}: the arguments in session {approval.session_id!r} do "
                "not match the ones approvers were shown (hash mismatch); refusing"
            )
        return real

    @staticmethod
    def _waiting_in(view: SessionView | None, approval: Approval) -> Interrupt:
        """The tool-call interrupt the approval's session is still waiting for."""
        interrupt = _pending_in(view).get(approval.interrupt_id)
        if interrupt is None or interrupt.tool_call is None:
            raise ApprovalError(
                f"approval {approval.id}: session {approval.session_id!r} is no longer waiting "
                f"for interrupt {approval.interrupt_id}"
            )
        return interrupt

    async def _view(self, session_id: str, *, strict: bool = True) -> SessionView | None:
        """The fold of the session's journal; not ``strict``: None when it cannot be read
        (a corrupt entry), for checks that then cannot apply."""
        from tether.durable.errors import CorruptEntry
        from tether.session import fold

        try:
            record = await self._store.load(session_id)
        except CorruptEntry:
            if strict:
                raise
            return None
        return None if record is None else fold(record)

    async def _pending_interrupts(self, session_id: str) -> dict[str, Interrupt]:
        return _pending_in(await self._view(session_id))

    async def answers_for(self, session_id: str) -> dict[str, Any]:
        """``{interrupt_id: response}`` for ``agent.resume(...)`` from the decided (or expired)
        approvals of the interrupts the session is still waiting for."""
        waiting = await self._pending_interrupts(session_id)
        out: dict[str, Any] = {}
        for approval in await self._query(session_id=session_id, limit=10_000):
            if approval.status == "pending" or approval.interrupt_id not in waiting:
                continue
            out[approval.interrupt_id] = await self.response_of(approval)
        return out

    async def response_of(self, approval: Approval) -> Any:
        """The ``agent.resume`` answer a decided (or expired) approval stands for."""
        decision = approval.decision
        if approval.status == "expired":
            decision = approval.on_expiry
        if decision == "respond":
            return approval.response
        approved = decision in ("approve", "approve_edited")
        if approval.source == "in_doubt":
            return "retry" if approved else "abort"
        if decision == "approve_edited":
            full = {**await self.real_arguments(approval), **(approval.edited_args or {})}
            return {"approved": True, "args": full, "reason": approval.note}
        if approved:
            return True
        who = approval.decided_by or "an approver"
        return {"approved": False, "reason": approval.note or f"denied by {who}"}


def prepare_request(
    session_id: str,
    interrupt: Interrupt,
    *,
    redactor: Redactor | None = None,
    ttl: float | None = DEFAULT_TTL,
    on_expiry: ExpiryAction = "deny",
    server: str | None = None,
) -> tuple[Approval, AuditEvent]:
    """The approval :meth:`ApprovalsBase.request` files for ``interrupt``, and its
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
    host's elicitation): the call's arguments through the one redaction path, and the
    reason with every string a mask hid scrubbed out."""
    call = interrupt.tool_call
    real = dict(call.arguments) if call is not None else {}
    shown = shown_arguments(call.name if call else None, real, redactor)
    hidden: set[str] = set()
    _hidden_strings(real, shown, hidden)
    return shown, _scrub(interrupt.reason, hidden)


def _pending_in(view: SessionView | None) -> dict[str, Interrupt]:
    """The interrupts a session's view still waits for (none unless it is suspended)."""
    if view is None or view.status != "suspended":
        return {}
    return {i.id: i for i in view.interrupts if i.id not in view.answers}


async def _check_edit(validate: Any, interrupt: Interrupt, tool: str, full: dict[str, Any]) -> None:
    """Apply ``validate`` to the merged call: an Agent (anything with ``tool_map``) through
    the one edit rule (``tether.agents.edits.check_edit``), else a ``Validator``."""
    if getattr(validate, "tool_map", None) is not None:
        from tether.agents.edits import check_edit

        await check_edit(validate, interrupt, full, inbox=True)
        return
    outcome = validate(tool, full)
    if inspect.isawaitable(outcome):
        await outcome
