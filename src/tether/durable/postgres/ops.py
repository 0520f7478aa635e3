"""Approvals, audit log and approvers of :class:`~tether.durable.PostgresStore`.

Lock order (no deadlocks): session row, then approval row, then the audit head row.
Audit appends from any number of processes serialize on ``audit_head`` (FOR UPDATE).
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
from tether.durable.postgres.claims import notify_ready
from tether.durable.store import Sidecar, sidecar_audit

if TYPE_CHECKING:
    from tether.durable.postgres.pool import Conn, PgConnector
    from tether.durable.store import Store

# A decision makes its suspended session ready, even with other rows still pending: the
# answered call may run now (targeted resume); the rest stay pending (docs/design.md s. 8).
_READY = (
    "UPDATE sessions SET status = 'ready', updated_at = %s WHERE id = %s AND status = 'suspended'"
)
_SET_DECISION = (
    "UPDATE approvals SET status = %s, decided_by = %s, decided_at = %s, decision = %s, "
    "edited_args = %s, response = %s, note = %s WHERE id = %s AND status = 'pending'"
)
_PLACEHOLDERS = ", ".join(["%s"] * len(APPROVAL_COLS.split(",")))


async def append_audit(conn: Conn, items: Sequence[AuditEvent]) -> list[StoredRow]:
    """Append to the chain inside the caller's transaction, holding the head row's lock."""
    cur = await conn.execute("SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE")
    rows = chain(await cur.fetchone(), items)
    async with conn.cursor() as many:
        await many.executemany(
            f"INSERT INTO audit ({INSERT_COLS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            [r.values() for r in rows],
        )
    if rows:
        await conn.execute(
            "UPDATE audit_head SET seq = %s, hash = %s WHERE id = 1", (rows[-1].seq, rows[-1].hash)
        )
    return rows


async def insert_approval(conn: Conn, approval: Approval) -> Approval | None:
    """Insert ``approval`` unless one is pending for its (session, interrupt): return that."""
    cur = await conn.execute(
        f"INSERT INTO approvals ({APPROVAL_COLS}) VALUES ({_PLACEHOLDERS}) "
        "ON CONFLICT DO NOTHING RETURNING id",
        approval_row(approval),
    )
    if await cur.fetchone() is not None:
        return None
    cur = await conn.execute(
        f"SELECT {APPROVAL_COLS} FROM approvals WHERE session_id = %s AND "
        "interrupt_id = %s AND status = 'pending'",
        (approval.session_id, approval.interrupt_id),
    )
    found = await cur.fetchone()
    if found is None:  # decided in between: ask again
        return await insert_approval(conn, approval)
    return approval_from_row(found)


async def ready_if_held_decided(conn: Conn, session_id: str, held: list[str]) -> None:
    """In a suspension's transaction (which holds the session row, as a decision does
    before it reads its row): ``ready`` if one of the ``held`` interrupts it kept was
    decided while its run ran (:func:`tether.durable.claims.held_decided`)."""
    if not held:
        return
    cur = await conn.execute(
        f"SELECT {HELD_ROWS} FROM approvals WHERE session_id = %s AND interrupt_id = ANY(%s)",
        (session_id, held),
    )
    if held_decided(await cur.fetchall(), held):
        await _ready(conn, time.time(), session_id)


async def write_sidecar(conn: Conn, sidecar: Sidecar) -> None:
    """A journal append's approvals and audit records, inside its transaction."""
    inserted: list[AuditEvent] = []
    kept: dict[str, str] = {}
    for approval, audit in sidecar.approvals:
        existing = await insert_approval(conn, approval)
        if existing is None:
            inserted.append(audit)
        else:
            kept[approval.id] = existing.id
    await append_audit(conn, sidecar_audit(sidecar, inserted, kept))


async def _ready(conn: Conn, now: float, session_id: str) -> None:
    """Mark the (suspended) session ready, and wake the workers at commit."""
    cur = await conn.execute(_READY, (now, session_id))
    if cur.rowcount == 1:
        await notify_ready(conn, session_id)


def _decision_values(a: Approval) -> tuple[Any, ...]:
    row = approval_row(a)
    return (a.status, a.decided_by, a.decided_at, a.decision, row[16], row[17], a.note, a.id)


class PostgresAudit(AuditBase):
    def __init__(self, pg: PgConnector) -> None:
        self._pg = pg

    async def _append(self, items: Sequence[AuditEvent]) -> list[StoredRow]:
        async with self._pg.connection("appending to the audit log") as conn, conn.transaction():
            return await append_audit(conn, items)

    async def _rows(
        self, session_id: str | None, after: int, limit: int | None
    ) -> tuple[list[StoredRow], Sequence[Any] | None]:
        async with self._pg.connection("reading the audit log") as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur = await conn.execute(
                f"SELECT {ROW_COLS} FROM audit WHERE seq > %(after)s AND "
                "(%(sid)s::text IS NULL OR session_id = %(sid)s) ORDER BY seq LIMIT %(limit)s",
                {"after": after, "sid": session_id, "limit": limit},
            )
            raw = await cur.fetchall()
            cur = await conn.execute("SELECT seq, hash FROM audit_head WHERE id = 1")
            head = await cur.fetchone()
        return [StoredRow(*r) for r in raw], head


class PostgresApprovals(ApprovalsBase):
    def __init__(self, store: Store, pg: PgConnector) -> None:
        super().__init__(store)
        self._pg = pg

    async def _insert(self, approval: Approval, audit: AuditEvent) -> Approval:
        doing = f"requesting an approval in session {approval.session_id!r}"
        async with self._pg.connection(doing) as conn, conn.transaction():
            existing = await insert_approval(conn, approval)
            if existing is not None:
                return existing
            await append_audit(conn, [audit])
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
        params = {
            "id": approval_id,
            "sid": session_id,
            "status": status,
            "tool": tool,
            "before": before,
            "limit": max(limit, 0),
        }
        async with self._pg.connection("listing approvals") as conn:
            cur = await conn.execute(
                f"SELECT {APPROVAL_COLS} FROM approvals WHERE "
                "(%(id)s::text IS NULL OR id = %(id)s) AND "
                "(%(sid)s::text IS NULL OR session_id = %(sid)s) AND "
                "(%(status)s::text IS NULL OR status = %(status)s) AND "
                "(%(tool)s::text IS NULL OR tool = %(tool)s) AND "
                "(%(before)s::double precision IS NULL OR requested_at <= %(before)s) "
                "ORDER BY requested_at, id LIMIT %(limit)s",
                params,
            )
            rows = await cur.fetchall()
        return [approval_from_row(r) for r in rows]

    async def _locked(self, conn: Conn, approval_id: str, session_id: str) -> Approval:
        await conn.execute("SELECT 1 FROM sessions WHERE id = %s FOR UPDATE", (session_id,))
        cur = await conn.execute(
            f"SELECT {APPROVAL_COLS} FROM approvals WHERE id = %s FOR UPDATE", (approval_id,)
        )
        found = await cur.fetchone()
        if found is None:
            raise ApprovalNotFound(approval_id)
        return approval_from_row(found)

    async def _decide(self, decided: Approval, audit: AuditEvent) -> Approval:
        conflict: Approval | None = None
        async with (
            self._pg.connection(f"deciding approval {decided.id}") as conn,
            conn.transaction(),
        ):
            current = await self._locked(conn, decided.id, decided.session_id)
            now = time.time()
            if (
                current.status == "pending"
                and current.expires_at is not None
                and current.expires_at <= now
            ):
                conflict = await self._resolve_expired(conn, current, now)
            elif current.status != "pending":
                conflict = current
            else:
                await conn.execute(_SET_DECISION, _decision_values(decided))
                await append_audit(conn, [audit])
                await _ready(conn, now, decided.session_id)
        if conflict is not None:
            raise ApprovalConflict(conflict)
        return decided

    async def _resolve_expired(self, conn: Conn, approval: Approval, now: float) -> Approval:
        expired = replace(
            approval,
            status="expired",
            decided_by="expiry",
            decided_at=now,
            decision=approval.on_expiry,
        )
        await conn.execute(_SET_DECISION, _decision_values(expired))
        await append_audit(conn, [expired_audit(expired)])
        await _ready(conn, now, approval.session_id)
        return expired

    async def _expire(self, now: float) -> list[Approval]:
        due = [
            a
            for a in await self._query(status="pending", limit=1_000_000)
            if a.expires_at is not None and a.expires_at <= now
        ]
        out: list[Approval] = []
        for approval in due:
            async with self._pg.connection("expiring approvals") as conn, conn.transaction():
                current = await self._locked(conn, approval.id, approval.session_id)
                if current.status == "pending":
                    out.append(await self._resolve_expired(conn, current, now))
        return out


class PostgresApprovers:
    def __init__(self, pg: PgConnector) -> None:
        self._pg = pg

    async def add(self, name: str, roles: tuple[str, ...] | list[str]) -> IssuedToken:
        roles = tuple(roles)
        check_approver(name, roles)
        token, key_id, digest = new_token()
        approver = Approver(name, roles, key_id, time.time())
        async with self._pg.connection(f"adding approver {name!r}") as conn:
            cur = await conn.execute(
                "INSERT INTO approvers (key_id, name, roles, secret_sha256, created_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING key_id",
                (key_id, name, ",".join(roles), digest, approver.created_at),
            )
            if await cur.fetchone() is None:
                raise ApproverExists(name)
        return IssuedToken(approver, token)

    async def verify(self, token: str) -> Approver | None:
        parsed = parse_token(token)
        if parsed is None:
            return None
        async with self._pg.connection("verifying an approver token") as conn:
            cur = await conn.execute(
                "SELECT name, roles, secret_sha256, created_at FROM approvers WHERE key_id = %s",
                (parsed[0],),
            )
            row = await cur.fetchone()
        if row is None or not matches(parsed[1], row[2]):
            return None
        return Approver(row[0], tuple(row[1].split(",")), parsed[0], float(row[3]))

    async def all(self) -> list[Approver]:
        async with self._pg.connection("listing approvers") as conn:
            cur = await conn.execute(
                "SELECT name, roles, key_id, created_at FROM approvers ORDER BY name"
            )
            rows = await cur.fetchall()
        return [Approver(r[0], tuple(r[1].split(",")), r[2], float(r[3])) for r in rows]

    async def remove(self, name: str) -> bool:
        async with self._pg.connection(f"removing approver {name!r}") as conn:
            cur = await conn.execute("DELETE FROM approvers WHERE name = %s", (name,))
            return cur.rowcount > 0
