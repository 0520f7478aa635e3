"""Approvals, audit log and approvers of :class:`~tether.durable.SQLiteStore`.

Writes run in the store's ``BEGIN IMMEDIATE`` transactions, so processes sharing the
file serialize: of two concurrent deciders exactly one sees the row still pending.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import (
    APPROVAL_COLS,
    Approval,
    ApprovalConflict,
    ApprovalNotFound,
    approval_from_row,
    approval_row,
    expired_audit,
)
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
from tether.durable.audit import INSERT_COLS, ROW_COLS, AuditBase, AuditEvent, StoredRow, chain
from tether.durable.claims import HELD_ROWS, held_decided
from tether.durable.sqlite.threads import StoreThreads, offloaded
from tether.durable.store import Sidecar, sidecar_audit

if TYPE_CHECKING:
    import sqlite3

    from tether.durable.sqlite.connections import SQLiteConnections
    from tether.durable.store import Store

# A decision makes its suspended session ready, even with other rows still pending: the
# answered call may run now (targeted resume); the rest stay pending (docs/design.md s. 8).
_READY = (
    "UPDATE sessions SET status = 'ready', updated_at = ? WHERE id = ? AND status = 'suspended'"
)
_SET_DECISION = (
    "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, decision = ?, "
    "edited_args = ?, response = ?, note = ? WHERE id = ? AND status = 'pending'"
)


def append_audit(conn: sqlite3.Connection, items: Sequence[AuditEvent]) -> list[StoredRow]:
    """Append to the chain inside the caller's write transaction."""
    rows = chain(conn.execute("SELECT seq, hash FROM audit_head WHERE id = 1").fetchone(), items)
    conn.executemany(
        f"INSERT INTO audit ({INSERT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [r.values() for r in rows],
    )
    if rows:
        conn.execute(
            "UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1", (rows[-1].seq, rows[-1].hash)
        )
    return rows


def insert_approval(conn: sqlite3.Connection, approval: Approval) -> Approval | None:
    """Insert ``approval`` unless one is pending for its (session, interrupt): return that."""
    found = conn.execute(
        f"SELECT {APPROVAL_COLS} FROM approvals WHERE session_id = ? AND interrupt_id = ? "
        "AND status = 'pending'",
        (approval.session_id, approval.interrupt_id),
    ).fetchone()
    if found is not None:
        return approval_from_row(found)
    row = approval_row(approval)
    conn.execute(
        f"INSERT INTO approvals ({APPROVAL_COLS}) VALUES ({', '.join('?' * len(row))})", row
    )
    return None


def ready_if_held_decided(
    conn: sqlite3.Connection, session_id: str, held: list[str], now: float
) -> None:
    """In a suspension's transaction: ``ready`` if one of the ``held`` interrupts it kept
    was decided while its run ran (:func:`tether.durable.claims.held_decided`)."""
    if not held:
        return
    marks = ", ".join("?" * len(held))
    rows = conn.execute(
        f"SELECT {HELD_ROWS} FROM approvals WHERE session_id = ? AND interrupt_id IN ({marks})",
        (session_id, *held),
    ).fetchall()
    if held_decided(rows, held):
        conn.execute(_READY, (now, session_id))


def write_sidecar(conn: sqlite3.Connection, sidecar: Sidecar) -> None:
    """A journal append's approvals and audit records, inside its transaction."""
    inserted: list[AuditEvent] = []
    kept: dict[str, str] = {}
    for approval, audit in sidecar.approvals:
        existing = insert_approval(conn, approval)
        if existing is None:
            inserted.append(audit)
        else:
            kept[approval.id] = existing.id
    append_audit(conn, sidecar_audit(sidecar, inserted, kept))


class OnStoreThreads:
    """A collaborator of the store ``_sql`` whose ``@offloaded`` calls run on its threads."""

    _sql: SQLiteConnections

    def store_threads(self) -> StoreThreads:
        return self._sql.store_threads()


def _decision_values(a: Approval) -> tuple[Any, ...]:
    row = approval_row(a)
    return (a.status, a.decided_by, a.decided_at, a.decision, row[16], row[17], a.note, a.id)


class SQLiteAudit(AuditBase, OnStoreThreads):
    def __init__(self, store: SQLiteConnections) -> None:
        self._sql = store

    @offloaded("write")
    async def _append(self, items: Sequence[AuditEvent]) -> list[StoredRow]:
        with self._sql.transaction() as conn:
            return append_audit(conn, items)

    @offloaded("read")
    async def _rows(
        self, session_id: str | None, after: int, limit: int | None
    ) -> tuple[list[StoredRow], Sequence[Any] | None]:
        where = "seq > ?" + ("" if session_id is None else " AND session_id = ?")
        args: tuple[Any, ...] = (after,) if session_id is None else (after, session_id)
        with self._sql.transaction("BEGIN") as conn:
            raw = conn.execute(
                f"SELECT {ROW_COLS} FROM audit WHERE {where} ORDER BY seq LIMIT ?",
                (*args, -1 if limit is None else limit),
            ).fetchall()
            head = conn.execute("SELECT seq, hash FROM audit_head WHERE id = 1").fetchone()
        return [StoredRow(*r) for r in raw], head


class SQLiteApprovals(ApprovalsBase, OnStoreThreads):
    def __init__(self, store: Store, connections: SQLiteConnections) -> None:
        super().__init__(store)
        self._sql = connections

    @offloaded("write")
    async def _insert(self, approval: Approval, audit: AuditEvent) -> Approval:
        with self._sql.transaction() as conn:
            existing = insert_approval(conn, approval)
            if existing is not None:
                return existing
            append_audit(conn, [audit])
        return approval

    @offloaded("read")
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
        conds: list[str] = []
        args: list[Any] = []
        for column, value in (
            ("id = ?", approval_id),
            ("session_id = ?", session_id),
            ("status = ?", status),
            ("tool = ?", tool),
            ("requested_at <= ?", before),
        ):
            if value is not None:
                conds.append(column)
                args.append(value)
        where = f"WHERE {' AND '.join(conds)} " if conds else ""
        with self._sql.transaction("BEGIN") as conn:
            rows = conn.execute(
                f"SELECT {APPROVAL_COLS} FROM approvals {where}ORDER BY requested_at, id LIMIT ?",
                (*args, max(limit, 0)),
            ).fetchall()
        return [approval_from_row(r) for r in rows]

    @offloaded("write")
    async def _decide(self, decided: Approval, audit: AuditEvent) -> Approval:
        conflict: Approval | None = None
        with self._sql.transaction() as conn:
            found = conn.execute(
                f"SELECT {APPROVAL_COLS} FROM approvals WHERE id = ?", (decided.id,)
            ).fetchone()
            if found is None:
                raise ApprovalNotFound(decided.id)
            current = approval_from_row(found)
            now = time.time()
            if (
                current.status == "pending"
                and current.expires_at is not None
                and current.expires_at <= now
            ):
                conflict = self._resolve_expired(conn, current, now)
            elif current.status != "pending":
                conflict = current
            else:
                conn.execute(_SET_DECISION, _decision_values(decided))
                append_audit(conn, [audit])
                conn.execute(_READY, (now, decided.session_id))
        if conflict is not None:
            raise ApprovalConflict(conflict)
        return decided

    def _resolve_expired(
        self, conn: sqlite3.Connection, approval: Approval, now: float
    ) -> Approval:
        expired = replace(
            approval,
            status="expired",
            decided_by="expiry",
            decided_at=now,
            decision=approval.on_expiry,
        )
        conn.execute(_SET_DECISION, _decision_values(expired))
        append_audit(conn, [expired_audit(expired)])
        conn.execute(_READY, (now, approval.session_id))
        return expired

    @offloaded("write")
    async def _expire(self, now: float) -> list[Approval]:
        with self._sql.transaction() as conn:
            due = conn.execute(
                f"SELECT {APPROVAL_COLS} FROM approvals WHERE status = 'pending' "
                "AND expires_at IS NOT NULL AND expires_at <= ? ORDER BY requested_at, id",
                (now,),
            ).fetchall()
            return [self._resolve_expired(conn, approval_from_row(r), now) for r in due]


class SQLiteApprovers(OnStoreThreads):
    def __init__(self, store: SQLiteConnections) -> None:
        self._sql = store

    @offloaded("write")
    async def add(self, name: str, roles: tuple[str, ...] | list[str]) -> IssuedToken:
        roles = tuple(roles)
        check_approver(name, roles)
        token, key_id, digest = new_token()
        approver = Approver(name, roles, key_id, time.time())
        with self._sql.transaction() as conn:
            if conn.execute("SELECT 1 FROM approvers WHERE name = ?", (name,)).fetchone():
                raise ApproverExists(name)
            conn.execute(
                "INSERT INTO approvers (key_id, name, roles, secret_sha256, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (key_id, name, ",".join(roles), digest, approver.created_at),
            )
        return IssuedToken(approver, token)

    @offloaded("read")
    async def verify(self, token: str) -> Approver | None:
        parsed = parse_token(token)
        if parsed is None:
            return None
        with self._sql.transaction("BEGIN") as conn:
            row = conn.execute(
                "SELECT name, roles, secret_sha256, created_at FROM approvers WHERE key_id = ?",
                (parsed[0],),
            ).fetchone()
        if row is None or not matches(parsed[1], row[2]):
            return None
        return Approver(row[0], tuple(row[1].split(",")), parsed[0], float(row[3]))

    @offloaded("read")
    async def all(self) -> list[Approver]:
        with self._sql.transaction("BEGIN") as conn:
            rows = conn.execute(
                "SELECT name, roles, key_id, created_at FROM approvers ORDER BY name"
            ).fetchall()
        return [Approver(r[0], tuple(r[1].split(",")), r[2], float(r[3])) for r in rows]

    @offloaded("write")
    async def remove(self, name: str) -> bool:
        with self._sql.transaction() as conn:
            return conn.execute("DELETE FROM approvers WHERE name = ?", (name,)).rowcount > 0
