"""Approvals: one row per durable interrupt that asks a human, listable across sessions.

Storage only: each store implements the four transactional primitives of
:class:`ApprovalsBase` (each backend's ``ops.py``: durable/memory, durable/sqlite, durable/postgres);
the queries are here. The rules (request / decide / ``answers_for``) are governance's
(:mod:`tether.governance.approvals`), applied through :mod:`tether.durable.rules`.
Records and errors are in ``approval_types.py`` and re-exported here.
"""

from __future__ import annotations

import importlib
import time
import warnings
from typing import TYPE_CHECKING, Any

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
    args_sha256,
)
from tether.durable.approvals_protocol import Approvals as Approvals
from tether.durable.rules import installed

if TYPE_CHECKING:
    from tether.durable.audit import AuditEvent
    from tether.durable.store import SessionRecord, Store

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
]


class ApprovalsBase:
    """The approval rows on four store primitives (``_insert``, ``_query``, ``_decide``,
    ``_expire``), each one transaction that also appends its audit records. The methods
    that follow the approval rules hand over to the installed governance rules."""

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
        and mark the session ``ready`` if it is suspended (even with other rows pending:
        targeted resume): one transaction."""
        raise NotImplementedError

    async def _expire(self, now: float) -> list[Approval]:
        raise NotImplementedError

    # -- storage, for the rules --------------------------------------------------------

    async def insert(self, approval: Approval, audit: AuditEvent) -> Approval:
        """Store a new pending row with its ``approval.requested`` record (storage only:
        :meth:`request` builds the row through the rules)."""
        return await self._insert(approval, audit)

    async def write_decision(self, decided: Approval, audit: AuditEvent) -> Approval:
        """Store a decided row with its ``approval.decided`` record, first decision wins
        (storage only: :meth:`decide` checks the decision through the rules first)."""
        return await self._decide(decided, audit)

    async def load_session(self, session_id: str) -> SessionRecord | None:
        """The journal of the row's session (what the rules check a decision against)."""
        return await self._store.load(session_id)

    # -- queries -----------------------------------------------------------------------

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

    async def expire_due(self, now: float | None = None) -> list[Approval]:
        """Resolve pending approvals past their expiry by their expiry action."""
        return await self._expire(time.time() if now is None else now)

    # -- the rules (tether.governance.approvals) ---------------------------------------

    async def request(
        self,
        session_id: str,
        interrupt: Any,
        *,
        redactor: Redactor | None = None,
        ttl: float | None = DEFAULT_TTL,
        on_expiry: ExpiryAction = "deny",
        server: str | None = None,
    ) -> Approval:
        """The approval for ``interrupt`` (a :class:`tether.Interrupt`; idempotent while it
        is pending). Its arguments are stored as shown: ``redactor``'s output with the
        default secret mask on top. ``server``: the MCP server (or other source) of the
        tool, shown to approvers."""
        return await installed().request(
            self,
            session_id,
            interrupt,
            redactor=redactor,
            ttl=ttl,
            on_expiry=on_expiry,
            server=server,
        )

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
        and, in the same transaction, mark the session ``ready`` if it is suspended (the
        answered call may run while others stay pending; a run holding the session ends
        ``ready`` itself, see :func:`tether.durable.claims.held_decided`).

        ``edited_args`` (approve only, Confirm interrupts only) are merged over the
        arguments that will run (the call after every policy ahead of the Confirm).
        ``validate`` (an Agent, or a ``Validator``) checks the merged call first: with an
        Agent, the one edit rule (``tether.governance.edits.check_edit``: the tool's schema,
        and the policies ahead of the Confirm would neither rewrite nor deny it);
        ``agent.resume`` applies it again anyway. A row whose interrupt the session's
        journal shows answered (another path answered it) is refused with
        :class:`ApprovalStale`, nothing recorded.
        """
        return await installed().decide(
            self,
            approval_id,
            decision,
            decided_by=decided_by,
            note=note,
            edited_args=edited_args,
            response=response,
            validate=validate,
            redactor=redactor,
        )

    async def answers_for(self, session_id: str) -> dict[str, Any]:
        """``{interrupt_id: response}`` for ``agent.resume(...)`` from the decided (or expired)
        approvals of the interrupts the session is still waiting for."""
        return await installed().answers_for(self, session_id)

    async def response_of(self, approval: Approval) -> Any:
        """The ``agent.resume`` answer a decided (or expired) approval stands for."""
        return await installed().response_of(self, approval)

    async def real_arguments(self, approval: Approval) -> dict[str, Any]:
        """The arguments the approval's call will run with (after the policies ahead of its
        Confirm), read from the session journal; refused when they no longer hash to
        ``args_sha256``."""
        return await installed().real_arguments(self, approval)


# Moved to tether.governance: still importable from here for one release, with a warning.
_MOVED = {
    "prepare_request": "tether.governance.approvals",
    "shown_interrupt": "tether.governance.approvals",
    "redact_secrets": "tether.governance.masks",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.durable.approvals' has no attribute {name!r}")
    warnings.warn(
        f"tether.durable.approvals.{name} moved to {module}; this alias leaves in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module), name)
