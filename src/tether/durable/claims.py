"""Claiming sessions that are ready to resume, for workers (docs/design.md s. 8, Workers).

A claim is a lease: ``claim_ready`` takes the lease of up to ``limit`` sessions whose
status is ``ready`` (every approval decided or expired) or ``running`` with a lease that
expired or whose holder on this host is dead (a crashed run, re-queued), in one
transaction per store (PostgreSQL: ``FOR UPDATE SKIP LOCKED``). The claiming store does
*not* remember the token as its own; ``adopt_lease`` hands it to the store object of the
Agent that will run the session, whose ``acquire_lease`` then keeps the same lease (same
token) instead of seeing it as busy. So the session is never free between the claim and
the run, and a claim that expired before the Agent took it over makes that Agent's
``acquire_lease`` raise ``SessionBusy`` if another worker has claimed it meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tether.durable.store import Holder, Lease, can_take, check_ttl

if TYPE_CHECKING:
    from tether.durable.memory import MemoryStore
    from tether.durable.sqlite import SQLiteStore

CLAIMABLE = ("ready", "running")
SUB_SESSION_KEY = "tether_subagent"
"""Metadata key of a sub-agent's child session: never claimed on its own (its top session's
resume recovers it, with the agent factory that knows the whole tree)."""
NOT_A_CHILD = f"metadata NOT LIKE '%\"{SUB_SESSION_KEY}\":%'"
"""SQL over the canonical JSON metadata text: the key as a key (a value holding the same
text would be escaped as ``\\"...\\"``)."""
READY_CHANNEL = "tether_ready"
"""PostgreSQL NOTIFY channel; the payload is the session id that became ready."""


@runtime_checkable
class ClaimingStore(Protocol):
    """The worker-side API of the built-in stores (not part of :class:`Store`)."""

    async def claim_ready(
        self, *, limit: int, ttl: float = 30.0, exclude: Collection[str] = ()
    ) -> list[Lease]: ...
    def adopt_lease(self, lease: Lease) -> None: ...
    async def mark_ready(self, session_id: str) -> bool: ...
    async def wait_ready(self, seconds: float) -> bool: ...


Candidate = tuple[str, str, str | None, str | None, str | None, int | None, float | None]
"""(id, status, lease token, holder, host, pid, expires) of one session row."""


def claimable(
    holder: Holder, rows: Iterable[Candidate], now: float, limit: int, exclude: Collection[str]
) -> list[str]:
    """The ids (at most ``limit``) whose lease ``holder`` may take for a worker: ready
    sessions first, then crashed runs. A lease this store object itself holds (an Agent
    running the session in this process) is never claimed."""
    out: list[str] = []
    for sid, status, token, _holder, host, pid, expires in sorted(
        rows, key=lambda r: r[1] != "ready"
    ):
        if len(out) >= limit:
            break
        if status not in CLAIMABLE or sid in exclude:
            continue
        if token is not None and holder.held.get(sid) == token:
            continue  # ours: running here
        if can_take(holder, sid, token, host, pid, expires, now):
            out.append(sid)
    return out


def claim_lease(holder: Holder, session_id: str, expires_at: float) -> Lease:
    """A fresh lease for a claim (not recorded in ``holder.held``: see the module doc)."""
    return holder.lease(session_id, holder.new_token(), expires_at)


def adopt(holder: Holder, lease: Lease) -> None:
    """Let ``holder``'s store re-acquire ``lease`` as its own (same token)."""
    holder.held[lease.session_id] = lease.token


# -- SQLite (one machine; workers poll) and memory (one process) ---------------------------


async def sqlite_claim(
    store: SQLiteStore, limit: int, ttl: float, exclude: Collection[str]
) -> list[Lease]:
    """Claim in one ``BEGIN IMMEDIATE`` transaction (processes sharing the file serialize)."""
    check_ttl(ttl)
    if limit <= 0:
        return []
    out: list[Lease] = []
    with store._errors(), store._tx() as conn:
        rows: list[Candidate] = conn.execute(
            "SELECT id, status, lease_token, lease_holder, lease_host, lease_pid, lease_expires "
            f"FROM sessions WHERE status IN ('ready', 'running') AND {NOT_A_CHILD} "
            "ORDER BY status = 'ready' DESC, updated_at, id"
        ).fetchall()
        now = time.time()
        for sid in claimable(store._holder, rows, now, limit, exclude):
            lease = claim_lease(store._holder, sid, now + ttl)
            conn.execute(
                "UPDATE sessions SET lease_token = ?, lease_holder = ?, lease_host = ?, "
                "lease_pid = ?, lease_expires = ? WHERE id = ?",
                (lease.token, lease.holder, lease.host, lease.pid, lease.expires_at, sid),
            )
            out.append(lease)
    return out


async def sqlite_mark_ready(store: SQLiteStore, session_id: str) -> bool:
    with store._errors(), store._tx() as conn:
        cur = conn.execute(
            "UPDATE sessions SET status = 'ready', updated_at = ? "
            "WHERE id = ? AND status = 'suspended'",
            (time.time(), session_id),
        )
        return cur.rowcount == 1


async def memory_claim(
    store: MemoryStore, limit: int, ttl: float, exclude: Collection[str]
) -> list[Lease]:
    """Claim in one step of the event loop (no await in between: atomic)."""
    check_ttl(ttl)
    now = time.time()
    rows: list[Candidate] = []
    for sid, row in sorted(store._rows.items(), key=lambda item: (item[1].updated_at, item[0])):
        if f'"{SUB_SESSION_KEY}":' in row.metadata:
            continue
        cur = row.lease
        rows.append(
            (sid, row.status, *(None,) * 5)
            if cur is None
            else (sid, row.status, cur.token, cur.holder, cur.host, cur.pid, cur.expires_at)
        )
    out: list[Lease] = []
    for sid in claimable(store._holder, rows, now, max(limit, 0), exclude):
        lease = claim_lease(store._holder, sid, now + ttl)
        store._rows[sid].lease = lease
        out.append(lease)
    return out


async def memory_mark_ready(store: MemoryStore, session_id: str) -> bool:
    row = store._rows.get(session_id)
    if row is None or row.status != "suspended":
        return False
    row.status = "ready"
    row.updated_at = time.time()
    return True


class WorkerSide:
    """The worker-side methods every built-in store shares (a mixin; needs ``_holder``).

    ``wait_ready`` polls; PostgreSQL overrides it with ``LISTEN``.
    """

    _holder: Holder

    def adopt_lease(self, lease: Lease) -> None:
        """Make ``lease`` (claimed by another store object of this process) ours."""
        adopt(self._holder, lease)

    async def wait_ready(self, seconds: float) -> bool:
        """Wait for a session to become ready: polls (sleeps ``seconds``)."""
        await asyncio.sleep(max(seconds, 0.0))
        return False
