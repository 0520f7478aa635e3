"""Claiming sessions that are ready to resume, for workers (docs/design.md s. 8, Workers).

A claim is a lease: ``claim_ready`` takes the lease of up to ``limit`` sessions whose
status is ``ready`` (an approval decided or expired since it suspended, see
:func:`held_decided` for one decided while its run ran) or ``running`` with a lease that
expired or whose holder on this host is dead (a crashed run, re-queued), in one
transaction per store (PostgreSQL: ``FOR UPDATE SKIP LOCKED``). The claiming store does
*not* remember the token as its own; ``adopt_lease`` hands it to the store object of the
Agent that will run the session, whose ``acquire_lease`` then keeps the same lease (same
token) instead of seeing it as busy. So the session is never free between the claim and
the run, and a claim that expired before the Agent took it over makes that Agent's
``acquire_lease`` raise ``SessionBusy`` if another worker has claimed it meanwhile.

The rules are here (which rows a holder may claim, the lease it gets); each backend runs
its own claim transaction (``sqlite/claims.py``, ``postgres/claims.py``,
``MemoryStore.claim_ready``). Nothing here imports a backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable
from typing import Protocol, runtime_checkable

from tether.durable.store import Holder, Lease, can_take

CLAIMABLE = ("ready", "running")
SUB_SESSION_KEY = "tether_subagent"
"""Metadata key of a sub-agent's child session: never claimed on its own (its top session's
resume recovers it, with the agent factory that knows the whole tree)."""
TEMPORAL_KEY = "tether_temporal"
"""Metadata key of a session a Temporal workflow runs (``{"workflow_id": ...}``): never
claimed by ``tether worker`` (the workflow resumes it, when its answers arrive)."""
NOT_CLAIMED_HERE = (SUB_SESSION_KEY, TEMPORAL_KEY)
"""Metadata keys whose sessions workers never claim."""
NOT_A_CHILD = " AND ".join(f"metadata NOT LIKE '%\"{key}\":%'" for key in NOT_CLAIMED_HERE)
"""SQL over the canonical JSON metadata text: the keys as keys (a value holding the same
text would be escaped as ``\\"...\\"``)."""
READY_CHANNEL = "tether_ready"
"""PostgreSQL NOTIFY channel; the payload is the session id that became ready."""

HELD_ROWS = "interrupt_id, status, requested_at, id"
"""The approval columns :func:`held_decided` reads, in its order."""


def held_decided(rows: Iterable[tuple[str, str, float, str]], held: Collection[str]) -> bool:
    """Whether a suspension that kept ``held`` interrupts from before its run (targeted
    resume, ``Sidecar.held``) ends ``ready``: the newest row of one of them (``rows``:
    :data:`HELD_ROWS` of the session) was decided or expired while the run held the
    session, when deciding could not make it ready. Older rows of an id (an in-doubt
    question asked again after a retry) do not count."""
    newest: dict[str, tuple[float, str, str]] = {}
    for interrupt_id, status, requested_at, row_id in rows:
        seen = newest.get(interrupt_id)
        if interrupt_id in held and (seen is None or (requested_at, row_id) > seen[:2]):
            newest[interrupt_id] = (requested_at, row_id, status)
    return any(status != "pending" for _, _, status in newest.values())


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
