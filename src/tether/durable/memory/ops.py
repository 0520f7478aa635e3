"""Approvals, audit log and approvers of :class:`~tether.durable.MemoryStore` (in-process).

Every method runs without awaiting in between, so each one is atomic on one event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import Approval, ApprovalConflict, expired_audit
from tether.durable.approvals import ApprovalsBase
from tether.durable.approvers import (
    Approver,
    ApproverExists,
    IssuedToken,
    check_approver,
    matches,
    new_token,
    parse_token,
)
from tether.durable.audit import AuditBase, AuditEvent, StoredRow, chain
from tether.durable.memory.tables import MemoryTables

if TYPE_CHECKING:
    from tether.durable.store import Sidecar, Store


def pending_approval(data: MemoryTables, approval: Approval) -> Approval | None:
    """The pending approval of ``approval``'s (session, interrupt), if there is one."""
    for row in data.approvals.values():
        if (
            row.status == "pending"
            and row.session_id == approval.session_id
            and row.interrupt_id == approval.interrupt_id
        ):
            return row
    return None


def sidecar_writer(data: MemoryTables, sidecar: Sidecar) -> Callable[[], None]:
    """Check ``sidecar`` against ``data`` (its audit records encode) and return the write,
    which cannot fail: the caller runs it after its own checks, so all or nothing happens."""
    from tether.durable.store import sidecar_audit

    inserted: list[AuditEvent] = []
    kept: dict[str, str] = {}
    new: list[Approval] = []
    for approval, audit in sidecar.approvals:
        existing = pending_approval(data, approval)
        if existing is None:
            new.append(approval)
            inserted.append(audit)
        else:
            kept[approval.id] = existing.id
    rows = chain(data.head, sidecar_audit(sidecar, inserted, kept))

    def write() -> None:
        for approval in new:
            data.approvals[approval.id] = approval
        if rows:
            data.audit.extend(rows)
            data.head = (rows[-1].seq, rows[-1].hash)

    return write


class MemoryAudit(AuditBase):
    def __init__(self, data: MemoryTables) -> None:
        self._data = data

    def append_now(self, items: Sequence[AuditEvent]) -> list[StoredRow]:
        rows = chain(self._data.head, items)
        if rows:
            self._data.audit.extend(rows)
            self._data.head = (rows[-1].seq, rows[-1].hash)
        return rows

    async def _append(self, items: Sequence[AuditEvent]) -> list[StoredRow]:
        return self.append_now(items)

    async def _rows(
        self, session_id: str | None, after: int, limit: int | None
    ) -> tuple[list[StoredRow], Sequence[Any] | None]:
        rows = [r for r in self._data.audit if r.seq > after]
        if session_id is not None:
            rows = [r for r in rows if r.session_id == session_id]
        return rows[:limit] if limit is not None else rows, self._data.head


class MemoryApprovals(ApprovalsBase):
    def __init__(self, store: Store, data: MemoryTables, audit: MemoryAudit) -> None:
        super().__init__(store)
        self._data = data
        self._audit = audit

    async def _insert(self, approval: Approval, audit: AuditEvent) -> Approval:
        existing = pending_approval(self._data, approval)
        if existing is not None:
            return existing
        self._data.approvals[approval.id] = approval
        self._audit.append_now([audit])
        return approval

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
        rows = [
            a
            for a in self._data.approvals.values()
            if (approval_id is None or a.id == approval_id)
            and (session_id is None or a.session_id == session_id)
            and (status is None or a.status == status)
            and (tool is None or a.tool == tool)
            and (before is None or a.requested_at <= before)
        ]
        rows.sort(key=lambda a: (a.requested_at, a.id))
        return rows[: max(limit, 0)]

    async def _decide(self, decided: Approval, audit: AuditEvent) -> Approval:
        current = self._data.approvals[decided.id]
        now = time.time()
        if (
            current.status == "pending"
            and current.expires_at is not None
            and current.expires_at <= now
        ):
            self._resolve_expired(current, now)
            current = self._data.approvals[decided.id]
        if current.status != "pending":
            raise ApprovalConflict(current)
        self._data.approvals[decided.id] = decided
        self._audit.append_now([audit])
        self._data.mark_ready(decided.session_id)
        return decided

    async def _expire(self, now: float) -> list[Approval]:
        due = [
            a
            for a in self._data.approvals.values()
            if a.status == "pending" and a.expires_at is not None and a.expires_at <= now
        ]
        return [self._resolve_expired(a, now) for a in due]

    def _resolve_expired(self, approval: Approval, now: float) -> Approval:
        expired = replace(
            approval,
            status="expired",
            decided_by="expiry",
            decided_at=now,
            decision=approval.on_expiry,
        )
        self._data.approvals[approval.id] = expired
        self._audit.append_now([expired_audit(expired)])
        self._data.mark_ready(approval.session_id)
        return expired


class MemoryApprovers:
    def __init__(self, data: MemoryTables) -> None:
        self._data = data

    async def add(self, name: str, roles: tuple[str, ...] | list[str]) -> IssuedToken:
        roles = tuple(roles)
        check_approver(name, roles)
        if any(a.name == name for a, _ in self._data.approvers.values()):
            raise ApproverExists(name)
        token, key_id, digest = new_token()
        approver = Approver(name, roles, key_id, time.time())
        self._data.approvers[key_id] = (approver, digest)
        return IssuedToken(approver, token)

    async def verify(self, token: str) -> Approver | None:
        parsed = parse_token(token)
        if parsed is None:
            return None
        found = self._data.approvers.get(parsed[0])
        if found is None or not matches(parsed[1], found[1]):
            return None
        return found[0]

    async def all(self) -> list[Approver]:
        return sorted((a for a, _ in self._data.approvers.values()), key=lambda a: a.name)

    async def remove(self, name: str) -> bool:
        for key_id, (approver, _) in list(self._data.approvers.items()):
            if approver.name == name:
                del self._data.approvers[key_id]
                return True
        return False
