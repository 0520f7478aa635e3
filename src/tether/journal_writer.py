"""The loop's journal writer: a run's deltas appended under the session's lease."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from tether.eager import run_eagerly
from tether.errors import PersistenceError, TetherError
from tether.journal_fold import result_dict
from tether.messages import Message, ToolResult
from tether.state_delta import smaller, state_delta

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable import Lease, SessionStatus, Store
    from tether.durable.audit import AuditEvent
    from tether.durable.entries import Entry, JournalKind
    from tether.durable.store import Sidecar


class SessionObserver(Protocol):
    """The agent's AuditTrail as the journal sees it: the records and approvals that commit
    with a run's end (``closing``), and what to do after other suspensions and answers."""

    def closing(
        self,
        session_id: str,
        stop_reason: str,
        reason: str | None,
        usage: dict[str, int],
        interrupts: list[Interrupt],
        held: frozenset[str] = ...,
    ) -> Sidecar: ...
    async def suspended(
        self, session_id: str, interrupts: list[Interrupt], *, again: bool = False
    ) -> None: ...
    async def answered(self, session_id: str, answers: dict[str, Any]) -> None: ...


_RECORDS = ("audit", "interrupt_answered")
"""Queued entries a run that ends early still writes (what happened, not a step)."""


class SessionJournal:
    """Appends a run's deltas to the store under the session's lease (compare-and-set)."""

    def __init__(self, store: Store, session_id: str, version: int, lease: Lease) -> None:
        self.store = store
        self.session_id = session_id
        self.version = version
        self.lease = lease
        self.since_snapshot = 0
        self.snapshot_seq = 0
        """Seq of the session's latest snapshot (0: none)."""
        self._state_json: str | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # parallel tool calls append one at a time (CAS)
        self.failed = False
        """Set after a failed write: the run fails and later writes are skipped."""
        self.observer: SessionObserver | None = None
        """Told about suspensions and answers (the agent's AuditTrail: approvals, audit)."""
        self._deferred: list[tuple[JournalKind, dict[str, Any]]] = []
        self._deferred_status: SessionStatus | None = None
        self._audit: list[AuditEvent] = []
        self.end_recorded = False
        """Whether the run's end went out with its audit records (``journal_end``)."""
        self.held: frozenset[str] = frozenset()
        """Interrupts pending before this run that it got no answer for (targeted resume)."""

    def defer(
        self, kind: JournalKind, data: dict[str, Any], *, status: SessionStatus | None = None
    ) -> None:
        """Queue an entry to go out with the next append (one commit for several steps).

        Only for entries whose loss in a crash is harmless: the run then resumes from
        the last saved step (a model call may repeat; a tool call never silently does,
        since its intent is always written before it runs).
        """
        self._deferred.append((kind, data))
        if status is not None:
            self._deferred_status = status

    def defer_audit(self, items: Sequence[AuditEvent]) -> None:
        """Queue audit records to commit in the next append's transaction: the journal and
        the audit log then agree on what happened, and a step costs one transaction."""
        self._audit.extend(items)

    def take_audit(self) -> list[AuditEvent]:
        """The queued audit records, handed back (after a failed write: to write elsewhere)."""
        items, self._audit = self._audit, []
        return items

    async def flush(self, *, records_only: bool = False) -> None:
        """Write the queued entries and audit records now (no-op when there are none).

        ``records_only`` (a run that ends without its last steps, e.g. abandoned by its
        caller): only the records (audit records, AGENT-HOOKS ``audit`` entries, answers
        given to ``resume``) are written; queued steps are dropped, as a crash would drop
        them."""
        if records_only:
            self._deferred = [(k, d) for k, d in self._deferred if k in _RECORDS]
            self._deferred_status = None
        if self._deferred:
            await self.append_many([])
        elif self._audit and not self.failed:
            items = self.take_audit()
            try:
                await self.store.audit.append_many(items)
            except TetherError as exc:
                raise PersistenceError(
                    f"session {self.session_id}: could not write the audit record(s) "
                    f"{', '.join(i.event for i in items)}: {exc}"
                ) from exc

    async def append(
        self,
        kind: JournalKind,
        data: dict[str, Any],
        *,
        durable: bool = False,
        status: SessionStatus | None = None,
    ) -> None:
        await self.append_many([(kind, data)], durable=durable, status=status)

    async def append_many(
        self,
        entries: Sequence[tuple[JournalKind, dict[str, Any]]],
        *,
        durable: bool = False,
        status: SessionStatus | None = None,
        sidecar: Sidecar | None = None,
    ) -> None:
        """Append ``entries`` (after the queued ones); ``sidecar``'s approvals and audit
        records, and the queued audit records, commit in the same transaction."""
        if self.failed:
            return
        async with self._lock:
            if self._deferred:
                entries = [*self._deferred, *entries]
                status = status or self._deferred_status
                self._deferred = []
                self._deferred_status = None
            if not entries:
                return
            # taken now: records queued while the store call is awaited go with the next one
            audit, self._audit = self._audit, []
            if audit:
                from tether.durable.store import Sidecar

                extra = sidecar or Sidecar()
                sidecar = Sidecar(extra.approvals, [*audit, *extra.audit], extra.held)
            appending = self.store.append(
                self.session_id,
                self.version,
                entries,
                status=status,
                durable=durable,
                lease=self.lease,
                sidecar=sidecar,
            )
            try:
                if getattr(self.store, "blocks_loop", False):
                    written = await appending  # runs to its end: nothing to cancel mid-write
                else:
                    written = await self._settled(appending)
            except TetherError as exc:
                self.failed = True
                self._audit = [*audit, *self._audit]  # for take_audit(): written elsewhere
                kinds = ", ".join(kind for kind, _ in entries)
                raise PersistenceError(
                    f"session {self.session_id}: could not save the journal entry ({kinds}) at "
                    f"version {self.version + 1}: {exc}. Everything saved before is intact; "
                    "fix the store and call agent.resume() to continue from the last saved step."
                ) from exc
            self.version = written[-1].seq
            self.since_snapshot += len(written)

    async def _settled(self, appending: Awaitable[list[Entry]]) -> list[Entry]:
        """Await a store write that really waits (e.g. PostgreSQL): one handed to the store
        cannot be taken back, so a cancelled caller first learns how it ended (the next
        append's version depends on it), then stops. A write that finishes in its first
        step (a store that ran it inline) needs no task."""
        if inspect.iscoroutine(appending):
            finished, rest = run_eagerly(appending)
            if finished:
                return rest  # type: ignore[return-value]
            appending = rest
        write = asyncio.ensure_future(appending)
        try:
            return await asyncio.shield(write)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                written = await write
                self.version = written[-1].seq
                self.since_snapshot += len(written)
            raise

    async def message(
        self, message: Message, failover: dict[str, list[dict[str, object]]] | None = None
    ) -> None:
        """Save ``message``: a tool message at once (it settles its calls), others queued;
        ``failover``: the retries and fallbacks of the model call that answered it."""
        if message.role == "tool":
            # queued results of this batch are inside the message: do not store them twice
            answered = {r.tool_call_id for r in message.tool_results}
            self._deferred = [
                (kind, data)
                for kind, data in self._deferred
                if not (kind == "tool_result" and data["result"]["tool_call_id"] in answered)
            ]
            await self.append("message", {"message": message.to_dict()})
        elif failover is not None:
            self.defer("message", {"message": message.to_dict(), "failover": failover})
        else:
            self.defer("message", {"message": message.to_dict()})

    async def tool_result(self, result: ToolResult, *, last: bool = False) -> None:
        """Save one call's result; the batch's last result rides with its tool message."""
        if last:
            self.defer("tool_result", {"result": result_dict(result)})
        else:
            await self.append("tool_result", {"result": result_dict(result)})

    async def state_if_changed(self, state: dict[str, Any]) -> None:
        """Journal the session state when it differs from what was last written:
        only the delta when that is smaller than the whole state."""
        encoded = json.dumps(state, sort_keys=True, default=repr)
        if encoded == self._state_json:
            return
        previous = self._state_json
        self._state_json = encoded
        if previous is not None:
            delta = state_delta(json.loads(previous), json.loads(encoded))
            if smaller(delta, state):
                self.defer("state", {"delta": delta})
                return
        self.defer("state", {"state": state})

    def remember_state(self, encoded: str | None) -> None:
        """Set the state JSON last written (None: unknown, so the next check writes)."""
        self._state_json = encoded

    @property
    def state_json(self) -> str | None:
        return self._state_json

    def start_heartbeat(self, ttl: float) -> None:
        """Renew the lease every ttl/3 seconds while the run lasts."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(ttl / 3)
                self.lease = await self.store.renew_lease(self.lease, ttl=ttl)

        self._heartbeat = asyncio.get_running_loop().create_task(beat())

    async def close(self) -> None:
        """Stop the heartbeat and release the lease (best effort: it also expires)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None
        with contextlib.suppress(TetherError):  # the lease expires on its own
            await self.store.release_lease(self.lease)
