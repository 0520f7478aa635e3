"""Worker claims on SQLite (one machine; workers poll): one ``BEGIN IMMEDIATE``
transaction per claim, so processes sharing the file serialize (the rules:
:mod:`tether.durable.claims`)."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING

from tether.durable.claims import NOT_A_CHILD, Candidate, claim_lease, claimable
from tether.durable.store import Holder, Lease, check_ttl

if TYPE_CHECKING:
    from tether.durable.sqlite.connections import SQLiteConnections


class SQLiteClaims:
    """The claim side of one SQLiteStore; its methods run inside the store's
    ``@offloaded`` calls (on its threads)."""

    def __init__(self, store: SQLiteConnections, holder: Holder) -> None:
        self._sql = store
        self._holder = holder

    def claim(self, limit: int, ttl: float, exclude: Collection[str]) -> list[Lease]:
        check_ttl(ttl)
        if limit <= 0:
            return []
        out: list[Lease] = []
        with self._sql.transaction() as conn:
            rows: list[Candidate] = conn.execute(
                "SELECT id, status, lease_token, lease_holder, lease_host, lease_pid, "
                f"lease_expires FROM sessions WHERE status IN ('ready', 'running') AND "
                f"{NOT_A_CHILD} ORDER BY status = 'ready' DESC, updated_at, id"
            ).fetchall()
            now = time.time()
            for sid in claimable(self._holder, rows, now, limit, exclude):
                lease = claim_lease(self._holder, sid, now + ttl)
                conn.execute(
                    "UPDATE sessions SET lease_token = ?, lease_holder = ?, lease_host = ?, "
                    "lease_pid = ?, lease_expires = ? WHERE id = ?",
                    (lease.token, lease.holder, lease.host, lease.pid, lease.expires_at, sid),
                )
                out.append(lease)
        return out

    def mark_ready(self, session_id: str) -> bool:
        with self._sql.transaction() as conn:
            cur = conn.execute(
                "UPDATE sessions SET status = 'ready', updated_at = ? "
                "WHERE id = ? AND status = 'suspended'",
                (time.time(), session_id),
            )
            return cur.rowcount == 1
