"""Workers: resume sessions that are ready (approved, expired, or re-queued after a crash).

One worker is one asyncio loop running up to ``concurrency`` sessions at once. Each cycle
it resolves overdue approvals (``expire_due``), claims ready sessions through the store
(``claim_ready``: a lease per session, see ``tether.durable.claims``), hands each claim to
the store of the Agent the factory builds (``AppFactory.build``; ``adopt_lease``, so the
Agent's own lease acquisition keeps the same lease and heartbeats it), resumes it with
``store.approvals.answers_for(session_id)`` (no answers: crash recovery) and releases.
Idle, it waits for a wake-up (PostgreSQL ``LISTEN tether_ready``) or ``poll`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.durable.claims import ClaimingStore
from tether.durable.errors import SessionBusy
from tether.ops.app_loader import AppFactory, Factory

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.durable import Lease, Store

__all__ = ["Factory", "Outcome", "Worker", "WorkerConfig"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a worker did with one claimed session."""

    session_id: str
    outcome: str
    """``completed``, ``suspended`` (new approvals), ``cancelled``, ``failed``, ``paused``,
    ``handed back`` (SIGTERM), ``busy`` (another worker has it), ``abandoned``, ``error``."""
    seconds: float
    detail: str = ""
    waited: float | None = None
    """Seconds from the session's last decision to the start of the resume, if known."""


@dataclass(slots=True)
class _Running:
    lease: Lease
    task: asyncio.Task[Outcome] | None = None
    agent: Agent | None = None


@dataclass(slots=True)
class WorkerConfig:
    concurrency: int = 1
    poll: float = 1.0
    lease_ttl: float = 30.0
    """ttl of a claim, until the Agent takes the lease over with its own ``Execution.lease_ttl``."""
    grace: float = 30.0
    """On stop: seconds the running sessions get to finish before they are paused."""
    listen: bool = True
    """Wait for NOTIFY wake-ups (PostgreSQL); False polls every ``poll`` seconds only."""
    backoff: float = 30.0
    """A session whose resume raised is not claimed again by this worker for this long."""
    on_outcome: Callable[[Outcome], None] | None = None
    on_start: Callable[[str], None] | None = field(default=None)


class Worker:
    """Claims and resumes ready sessions from ``store`` with agents from ``factory``."""

    def __init__(self, store: Store, factory: Factory, config: WorkerConfig | None = None):
        if not isinstance(store, ClaimingStore):
            raise TypeError(
                f"{type(store).__name__} cannot hand out claims; workers need MemoryStore, "
                "SQLiteStore or PostgresStore"
            )
        self.store = store
        self.claims: ClaimingStore = store
        self.factory = AppFactory.of(factory)
        self.config = config or WorkerConfig()
        if self.config.concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.running: dict[str, _Running] = {}
        self.outcomes: list[Outcome] = []
        self._stop = asyncio.Event()
        self._skip: dict[str, float] = {}  # session id -> monotonic time to retry after

    def stop(self) -> None:
        """Graceful stop: claim nothing more; finish or hand back what runs (``grace``)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    async def run(self, *, once: bool = False) -> list[Outcome]:
        """Work until :meth:`stop` (or, ``once``, until nothing is ready); the outcomes."""
        wake: asyncio.Task[bool] | None = None
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            while not self.stopping:
                claimed = await self._cycle()
                tasks = [r.task for r in self.running.values() if r.task is not None]
                if once and not tasks and not claimed:
                    break
                waits: set[asyncio.Future[Any]] = {stop, *tasks}
                if not once and len(self.running) < self.config.concurrency:
                    if wake is None:
                        wake = asyncio.ensure_future(self._wait_ready())
                    waits.add(wake)
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if wake is not None and wake.done():
                    wake = None
            await self._drain()
        finally:
            for pending in (wake, stop):
                if pending is not None and not pending.done():
                    pending.cancel()
                    with contextlib.suppress(BaseException):
                        await pending
        return self.outcomes

    async def _wait_ready(self) -> bool:
        if self.config.listen:
            return await self.claims.wait_ready(self.config.poll)
        await asyncio.sleep(self.config.poll)
        return False

    async def _cycle(self) -> int:
        """Expire overdue approvals, reap finished runs, claim what fits."""
        for sid, run in list(self.running.items()):
            if run.task is not None and run.task.done():
                del self.running[sid]
        await self.store.approvals.expire_due()
        free = self.config.concurrency - len(self.running)
        if free <= 0:
            return 0
        now = time.monotonic()
        self._skip = {sid: t for sid, t in self._skip.items() if t > now}
        leases = await self.claims.claim_ready(
            limit=free, ttl=self.config.lease_ttl, exclude={*self.running, *self._skip}
        )
        for lease in leases:
            run = _Running(lease)
            self.running[lease.session_id] = run
            run.task = asyncio.create_task(self._resume(run), name=f"resume {lease.session_id}")
        return len(leases)

    async def _resume(self, run: _Running) -> Outcome:
        sid = run.lease.session_id
        started = time.monotonic()
        waited: float | None = None
        try:
            agent = run.agent = self.factory.build(sid)
            if agent.store is None or not isinstance(agent.store, ClaimingStore):
                raise TypeError("the factory's Agent needs a store=... of the same database")
            if agent.session_id != sid:
                raise ValueError(f"the factory returned an Agent for session {agent.session_id!r}")
            agent.store.adopt_lease(run.lease)
            answers = await self.store.approvals.answers_for(sid)
            waited = await self._waited(sid) if answers else None
            if self.config.on_start is not None:
                self.config.on_start(sid)
            result = await agent.resume_async(answers or None)
            outcome = _OUTCOMES.get(result.stop_reason, result.stop_reason)
            detail: str = result.stop_reason
            if result.interrupts:
                detail = f"{len(result.interrupts)} approval(s) pending"
            if outcome == "paused" and self.stopping and await self.claims.mark_ready(sid):
                outcome, detail = "handed back", "paused on shutdown, ready for another worker"
        except SessionBusy as exc:
            outcome, detail = "busy", str(exc)
        except Exception as exc:  # the session stays as it is; another cycle retries it
            self._skip[sid] = time.monotonic() + self.config.backoff
            outcome, detail = "error", f"{type(exc).__name__}: {exc}"
        finally:
            if run.agent is not None:
                run.agent.close()
            with contextlib.suppress(Exception):  # a no-op once the Agent released it
                await self.store.release_lease(run.lease)
        return self._done(Outcome(sid, outcome, time.monotonic() - started, detail, waited))

    async def _waited(self, sid: str) -> float | None:
        decided = [a.decided_at for a in await self.store.approvals.find(session_id=sid)]
        last = max((d for d in decided if d is not None), default=None)
        return None if last is None else max(time.time() - last, 0.0)

    def _done(self, outcome: Outcome) -> Outcome:
        self.outcomes.append(outcome)
        if self.config.on_outcome is not None:
            self.config.on_outcome(outcome)
        return outcome

    async def _drain(self) -> None:
        """On stop: wait ``grace`` for running sessions, pause the rest, cancel stragglers."""
        tasks = {r.task for r in self.running.values() if r.task is not None}
        if not tasks:
            return
        _, left = await asyncio.wait(tasks, timeout=self.config.grace)
        if left:
            for run in self.running.values():
                if run.task in left and run.agent is not None:
                    run.agent.pause()
            _, left = await asyncio.wait(left, timeout=max(self.config.grace, 5.0))
        for task in left:  # stuck in a tool: its lease expires and the run is re-queued
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=5.0)
            for sid, run in self.running.items():
                if run.task in left:
                    self._done(Outcome(sid, "abandoned", 0.0, "did not stop in time"))
        self.running.clear()


_OUTCOMES = {"end_turn": "completed", "interrupt": "suspended"}
