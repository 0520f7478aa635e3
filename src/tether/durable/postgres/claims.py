"""Worker claims on PostgreSQL: ``FOR UPDATE SKIP LOCKED`` and ``LISTEN tether_ready``.

``store.approvals.decide`` / ``expire_due`` send ``NOTIFY tether_ready, '<session id>'``
in the transaction that makes a session ready (delivered at commit), so an idle worker
waiting in :meth:`PgClaims.wait` wakes at once instead of at its next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from tether.durable.claims import (
    NOT_A_CHILD,
    READY_CHANNEL,
    Candidate,
    claim_lease,
    claimable,
)
from tether.durable.store import Holder, Lease, check_ttl

if TYPE_CHECKING:
    from psycopg import AsyncConnection

    from tether.durable.postgres.pool import PgConnector

_NOW = "extract(epoch FROM clock_timestamp())::double precision"

# Ready sessions without a live lease, and running ones whose lease expired or belongs to
# a process on this host (checked for liveness in Python). Rows another transaction has
# locked (a concurrent claim, a decision, an append) are skipped, not waited for.
NOT_A_CHILD_PG = NOT_A_CHILD.replace("%", "%%")  # psycopg placeholders: a literal %
_CANDIDATES = f"""
SELECT id, status, lease_token, lease_holder, lease_host, lease_pid, lease_expires
FROM sessions
WHERE status IN ('ready', 'running') AND NOT (id = ANY(%(skip)s)) AND {NOT_A_CHILD_PG}
  AND (lease_token IS NULL OR lease_expires <= {_NOW} OR lease_host = %(host)s)
ORDER BY (status = 'ready') DESC, updated_at, id
LIMIT %(scan)s
FOR UPDATE SKIP LOCKED
"""
_TAKE = (
    "UPDATE sessions SET lease_token = %s, lease_holder = %s, lease_host = %s, "
    "lease_pid = %s, lease_expires = %s WHERE id = %s"
)
_MARK_READY = f"""
WITH u AS (
    UPDATE sessions SET status = 'ready', updated_at = %(at)s
    WHERE id = %(id)s AND status = 'suspended'
    RETURNING id
)
SELECT pg_notify('{READY_CHANNEL}', id) FROM u
"""


async def notify_ready(conn: Any, session_id: str) -> None:
    """Queue the wake-up inside the caller's transaction (sent when it commits)."""
    await conn.execute("SELECT pg_notify(%s, %s)", (READY_CHANNEL, session_id))


class PgClaims:
    """The claim side of one PostgresStore; owns the store's LISTEN connection."""

    def __init__(self, pg: PgConnector, holder: Holder) -> None:
        self._pg = pg
        self._holder = holder
        self._listener: AsyncConnection[Any] | None = None

    async def claim(self, limit: int, ttl: float, exclude: Collection[str]) -> list[Lease]:
        check_ttl(ttl)
        if limit <= 0:
            return []
        holder = self._holder
        params = {"skip": list(exclude), "host": holder.host, "scan": limit * 4 + 8}
        out: list[Lease] = []
        async with self._pg.connection("claiming ready sessions") as conn, conn.transaction():
            cur = await conn.execute(_CANDIDATES, params)
            rows: list[Candidate] = [
                (r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in await cur.fetchall()
            ]
            cur = await conn.execute(f"SELECT {_NOW}")
            now_row = await cur.fetchone()
            now = float(now_row[0]) if now_row else time.time()
            for sid in claimable(holder, rows, now, limit, exclude):
                lease = claim_lease(holder, sid, now + ttl)
                await conn.execute(
                    _TAKE, (lease.token, lease.holder, lease.host, lease.pid, lease.expires_at, sid)
                )
                out.append(lease)
        return out

    async def mark_ready(self, session_id: str) -> bool:
        async with self._pg.connection(f"marking session {session_id!r} ready") as conn:
            cur = await conn.execute(_MARK_READY, {"at": time.time(), "id": session_id})
            return await cur.fetchone() is not None

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a NOTIFY; False on timeout (or no listener)."""
        import psycopg

        try:
            conn = await self._listen()
            got = False
            async for _ in conn.notifies(timeout=max(seconds, 0.0), stop_after=1):
                got = True
            return got
        except (psycopg.Error, OSError):
            await self.close()  # reconnect next time; poll meanwhile
            await asyncio.sleep(max(seconds, 0.0))
            return False

    async def _listen(self) -> AsyncConnection[Any]:
        if self._listener is None or self._listener.closed:
            import psycopg

            conn = await psycopg.AsyncConnection.connect(
                self._pg.dsn,
                autocommit=True,
                connect_timeout=max(1, round(self._pg.connect_timeout)),
            )
            await conn.execute(f"LISTEN {READY_CHANNEL}")
            self._listener = conn
        return self._listener

    async def close(self) -> None:
        conn, self._listener = self._listener, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
