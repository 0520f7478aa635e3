"""The tables of one MemoryStore, shared with its siblings: session rows, approvals,
the audit chain and approvers, in plain dicts and lists."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.durable.audit import GENESIS, StoredRow

if TYPE_CHECKING:
    from tether.durable.approval_types import Approval
    from tether.durable.approvers import Approver
    from tether.durable.memory.memory_entries import Scopes
    from tether.durable.store import Lease, SessionStatus


@dataclass(slots=True)
class SessionRow:
    """One session: its entries as canonical JSON text, so reads never alias writes."""

    version: int
    status: SessionStatus
    created_at: float
    updated_at: float
    metadata: str
    snapshot_seq: int = 0
    entries: list[tuple[str, str, float, int]] = field(
        default_factory=list
    )  # kind, data, at, schema
    lease: Lease | None = None


@dataclass(slots=True)
class MemoryTables:
    """Everything one MemoryStore (and its siblings) holds."""

    sessions: dict[str, SessionRow] = field(default_factory=dict)
    approvals: dict[str, Approval] = field(default_factory=dict)
    audit: list[StoredRow] = field(default_factory=list)
    head: tuple[int, str] = (0, GENESIS)
    approvers: dict[str, tuple[Approver, str]] = field(default_factory=dict)  # key id -> row
    memory: Scopes = field(default_factory=dict)

    def ready_if_held_decided(self, session_id: str, held: list[str]) -> None:
        """A suspension keeping ``held`` interrupts ends ``ready`` if one was decided
        meanwhile (:func:`tether.durable.claims.held_decided`)."""
        from tether.durable.claims import held_decided

        rows = [
            (a.interrupt_id, a.status, a.requested_at, a.id)
            for a in self.approvals.values()
            if a.session_id == session_id
        ]
        if held and held_decided(rows, held):
            self.mark_ready(session_id)

    def mark_ready(self, session_id: str) -> bool:
        """Set a ``suspended`` session ``ready`` (a decision does, even with other approvals
        still pending: the answered call may run now, the rest stay pending)."""
        row = self.sessions.get(session_id)
        if row is None or row.status != "suspended":
            return False
        row.status = "ready"
        row.updated_at = time.time()
        return True
