"""MemoryStore: dict-based, for tests and single-process use. Nothing survives the process."""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Any

from tether.durable.claims import (
    NOT_CLAIMED_HERE,
    Candidate,
    WorkerSide,
    claim_lease,
    claimable,
)
from tether.durable.entries import ENTRY_SCHEMA, Entry, JournalKind, decode_entry, decode_object
from tether.durable.errors import LeaseLost, SessionBusy, SessionConflict, SessionNotFound
from tether.durable.memory.memory_entries import MemoryMemoryEntries
from tether.durable.memory.ops import (
    MemoryApprovals,
    MemoryApprovers,
    MemoryAudit,
    sidecar_writer,
)
from tether.durable.memory.search import search_tables
from tether.durable.memory.tables import MemoryTables, SessionRow
from tether.durable.session_list import TOOL_CALL_MARK, PromptRows, Row, build_page, check_page
from tether.durable.session_prompt import READ_MAX
from tether.durable.session_search import TextHit, TextQuery
from tether.durable.store import (
    Holder,
    Lease,
    SessionPage,
    SessionRecord,
    SessionStatus,
    SessionSummary,
    Sidecar,
    can_take,
    check_status,
    check_ttl,
    encode_entries,
    encode_metadata,
    next_token,
)
from tether.session_ids import validate_session_id


class MemoryStore(WorkerSide):
    """In-process store. Entries are kept as canonical JSON text, so reads never alias writes.

    Every method runs without awaiting in between, so each is atomic on one event loop.
    Use :meth:`sibling` for a second lease holder on the same data.
    """

    def __init__(self) -> None:
        self._holder = Holder()
        self._attach(MemoryTables())

    def _attach(self, data: MemoryTables) -> None:
        self._ops = data
        self._rows = data.sessions
        self.audit = MemoryAudit(data)
        self.approvals = MemoryApprovals(self, data, self.audit)
        self.approvers = MemoryApprovers(data)
        self.memory_entries = MemoryMemoryEntries(data.memory)

    def sibling(self) -> MemoryStore:
        """Another store object (another lease holder) sharing this store's sessions."""
        other = MemoryStore()
        other._attach(self._ops)
        return other

    async def create(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionRecord:
        validate_session_id(session_id)
        text = encode_metadata(session_id, metadata)
        if session_id not in self._rows:
            now = time.time()
            self._rows[session_id] = SessionRow(0, "idle", now, now, text)
        return self._record(session_id, self._rows[session_id])

    async def load(
        self, session_id: str, *, known_version: int | None = None
    ) -> SessionRecord | None:
        row = self._rows.get(session_id)
        if row is None:
            return None
        return self._record(session_id, row, current=row.version == known_version)

    async def append(
        self,
        session_id: str,
        expected_version: int,
        entries: Sequence[tuple[JournalKind, dict[str, Any]]],
        *,
        status: SessionStatus | None = None,
        durable: bool = False,
        lease: Lease | None = None,
        sidecar: Sidecar | None = None,
    ) -> list[Entry]:
        encoded = encode_entries(session_id, expected_version, entries, status)
        row = self._get(session_id)
        if row.version != expected_version:
            raise SessionConflict(session_id, expected_version, row.version)
        now = time.time()
        if lease is not None:
            current = row.lease
            if current is None or current.token != lease.token:
                raise LeaseLost(session_id, "another holder took it or it was released")
            if current.expires_at <= now:
                raise LeaseLost(session_id, "it expired")
        if sidecar:
            sidecar_writer(self._ops, sidecar)()
        out: list[Entry] = []
        for item in encoded:
            row.entries.append((item.kind, item.text, now, ENTRY_SCHEMA))
            out.append(decode_entry(session_id, item.seq, item.kind, item.text, now, ENTRY_SCHEMA))
            if item.kind == "snapshot":
                row.snapshot_seq = item.seq
        row.version = expected_version + len(encoded)
        row.updated_at = now
        if status is not None:
            row.status = status
        if sidecar and status == "suspended":
            self._ops.ready_if_held_decided(session_id, sidecar.held)
        return out

    async def read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> list[Entry]:
        row = self._get(session_id)
        return self._entries(session_id, row, after_seq, until_seq)

    async def acquire_lease(
        self, session_id: str, *, ttl: float = 30.0, create: bool = False
    ) -> Lease:
        check_ttl(ttl)
        if create and session_id not in self._rows:
            await self.create(session_id)
        row = self._get(session_id)
        now = time.time()
        cur = row.lease
        if cur is not None and not can_take(
            self._holder, session_id, cur.token, cur.host, cur.pid, cur.expires_at, now
        ):
            raise SessionBusy(session_id, cur.holder, cur.expires_at)
        token = next_token(self._holder, session_id, cur.token if cur else None)
        row.lease = self._holder.lease(session_id, token, now + ttl)
        self._holder.held[session_id] = token
        return row.lease

    async def renew_lease(self, lease: Lease, *, ttl: float = 30.0) -> Lease:
        check_ttl(ttl)
        row = self._rows.get(lease.session_id)
        if row is None or row.lease is None or row.lease.token != lease.token:
            raise LeaseLost(lease.session_id, "another holder took it or it was released")
        row.lease = self._holder.lease(lease.session_id, lease.token, time.time() + ttl)
        return row.lease

    async def release_lease(self, lease: Lease) -> None:
        row = self._rows.get(lease.session_id)
        if row is not None and row.lease is not None and row.lease.token == lease.token:
            row.lease = None
        if self._holder.held.get(lease.session_id) == lease.token:
            del self._holder.held[lease.session_id]

    async def set_status(self, session_id: str, status: SessionStatus) -> None:
        check_status(status)
        row = self._get(session_id)
        row.status = status
        row.updated_at = time.time()

    async def list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]:
        check_status(status)
        rows = [(sid, r) for sid, r in self._rows.items() if status is None or r.status == status]
        rows.sort(key=lambda item: (-item[1].updated_at, item[0]))
        return [
            SessionSummary(
                sid, r.status, r.version, r.created_at, r.updated_at, self._metadata(sid, r)
            )
            for sid, r in rows[: max(limit, 0)]
        ]

    async def session_page(
        self,
        *,
        status: SessionStatus | None = None,
        search: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> SessionPage:
        """One page of sessions with their counts (see :mod:`tether.durable.session_list`)."""
        check_status(status)
        check_page(search, offset, limit)
        approvals = self._ops.approvals.values()
        pending: dict[str, int] = {}
        for approval in approvals:
            if approval.status == "pending":
                pending[approval.session_id] = pending.get(approval.session_id, 0) + 1
        matching = [
            (sid, r)
            for sid, r in self._rows.items()
            if (status is None or r.status == status) and (not search or search in sid)
        ]
        matching.sort(key=lambda item: (-item[1].updated_at, item[0]))
        chosen = matching[offset : offset + limit]
        rows: list[Row] = [
            (sid, r.status, r.version, r.created_at, r.updated_at, pending.get(sid, 0))
            for sid, r in chosen
        ]
        usage = [(sid, e[1]) for sid, r in chosen for e in r.entries if e[0] == "usage"]
        prompts = PromptRows()
        for sid, r in chosen:
            messages = [e[1] for e in r.entries if e[0] == "message"]
            if messages:
                prompts.heads[sid] = (messages[0][:READ_MAX], len(messages[0]))
            prompts.calls += [(sid, text) for text in messages if TOOL_CALL_MARK in text]
        ids = {sid for sid, _ in chosen}
        prompts.approvals = [a for a in approvals if a.session_id in ids]
        return build_page(rows, usage, len(matching), offset, prompts)

    async def search_text(self, query: TextQuery) -> list[TextHit]:
        """Full-text search of past sessions (a scan: see :mod:`tether.durable.session_search`)."""
        return search_tables(self._ops, query)

    async def delete(self, session_id: str) -> None:
        self._rows.pop(session_id, None)
        self._holder.held.pop(session_id, None)

    # -- workers (tether.durable.claims) ---------------------------------------------------

    async def claim_ready(
        self, *, limit: int, ttl: float = 30.0, exclude: Collection[str] = ()
    ) -> list[Lease]:
        """Take the lease of up to ``limit`` sessions ready to resume (or crashed), in one
        step of the event loop (no await in between: atomic)."""
        check_ttl(ttl)
        now = time.time()
        rows: list[Candidate] = []
        for sid, row in sorted(self._rows.items(), key=lambda item: (item[1].updated_at, item[0])):
            if any(f'"{key}":' in row.metadata for key in NOT_CLAIMED_HERE):
                continue
            cur = row.lease
            rows.append(
                (sid, row.status, *(None,) * 5)
                if cur is None
                else (sid, row.status, cur.token, cur.holder, cur.host, cur.pid, cur.expires_at)
            )
        out: list[Lease] = []
        for sid in claimable(self._holder, rows, now, max(limit, 0), exclude):
            lease = claim_lease(self._holder, sid, now + ttl)
            self._rows[sid].lease = lease
            out.append(lease)
        return out

    async def mark_ready(self, session_id: str) -> bool:
        """Set a ``suspended`` session ``ready`` (a worker handing a paused run back)."""
        return self._ops.mark_ready(session_id)

    async def close(self) -> None:
        return None

    def _get(self, session_id: str) -> SessionRow:
        row = self._rows.get(session_id)
        if row is None:
            raise SessionNotFound(session_id)
        return row

    def _entries(
        self, session_id: str, row: SessionRow, after_seq: int, until_seq: int | None
    ) -> list[Entry]:
        stop = len(row.entries) if until_seq is None else min(until_seq, len(row.entries))
        return [
            decode_entry(session_id, seq, *row.entries[seq - 1])
            for seq in range(max(after_seq, 0) + 1, stop + 1)
        ]

    def _metadata(self, session_id: str, row: SessionRow) -> dict[str, Any]:
        return decode_object(row.metadata, what=f"metadata of session {session_id!r}")

    def _record(self, session_id: str, row: SessionRow, *, current: bool = False) -> SessionRecord:
        snap = row.snapshot_seq
        tail = [] if current else self._entries(session_id, row, max(snap - 1, 0), None)
        snapshot = tail.pop(0) if snap and tail else None
        before = [
            decode_entry(session_id, seq, *row.entries[seq - 1])
            for seq in range(1, snap)
            if not current and row.entries[seq - 1][0] == "snapshot"
        ]
        return SessionRecord(
            session_id=session_id,
            version=row.version,
            status=row.status,
            snapshot=snapshot,
            entries=tail,
            lease=row.lease,
            created_at=row.created_at,
            updated_at=row.updated_at,
            metadata=self._metadata(session_id, row),
            snapshot_seq=snap,
            earlier_snapshots=before,
        )
