"""The Store protocol, its record types and helpers shared by the implementations."""

from __future__ import annotations

import os
import secrets
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, get_args, runtime_checkable

from tether.durable.entries import JOURNAL_KINDS, Entry, JournalKind, decode_object, encode_json
from tether.errors import InputError

if TYPE_CHECKING:
    from tether.durable.approval_types import Approval
    from tether.durable.approvals_protocol import Approvals
    from tether.durable.approvers import Approvers
    from tether.durable.audit import AuditEvent, AuditLog
    from tether.durable.memory_entries import MemoryEntries

SessionStatus = Literal["idle", "running", "suspended", "ready", "completed", "failed", "cancelled"]
"""``ready``: suspended, and some approval of the suspension is decided (or expired); set by
``store.approvals.decide`` / ``expire_due`` on the session row only (the journal's last
status entry still says ``suspended``). A worker resumes it; the run sets ``running``."""
SESSION_STATUSES: Final[frozenset[str]] = frozenset(get_args(SessionStatus))
STORE_SCHEMA: Final = 5
"""Database schema version this code creates and understands."""


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to run one session, held by one store object in one process."""

    session_id: str
    token: str
    holder: str
    host: str
    pid: int
    expires_at: float


@dataclass(slots=True)
class SessionRecord:
    """A loaded session: latest snapshot plus the entries after it."""

    session_id: str
    version: int
    status: SessionStatus
    snapshot: Entry | None
    entries: list[Entry]
    lease: Lease | None
    created_at: float
    updated_at: float
    metadata: dict[str, Any]
    snapshot_seq: int = 0
    """Seq of the latest snapshot (0: none), also when ``snapshot`` was not read."""
    earlier_snapshots: list[Entry] = field(default_factory=list)
    """The snapshots before ``snapshot``, oldest first: each holds the messages added since
    the one before it (``snapshot`` holds the rest of the fold)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of :meth:`Store.list_sessions`."""

    session_id: str
    status: SessionStatus
    version: int
    created_at: float
    updated_at: float
    metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionStats:
    """One row of :meth:`Store.session_page`: a session with its counts so far.

    The usage counts add up the runs that ended (a run writes its usage when it stops);
    ``pending_approvals`` counts the approvals still waiting for a decision."""

    session_id: str
    status: SessionStatus
    version: int
    created_at: float
    updated_at: float
    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None
    """USD of the priced model calls of the runs that ended (None: none was priced)."""
    pending_approvals: int = 0
    first_prompt: str | None = None
    """The session's first user message on one line (at most ``PROMPT_MAX`` characters),
    redacted like ``sessions show``; None when it has none. Untrusted text: escape it
    for a terminal or a page."""

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class SessionPage:
    """Sessions ``offset .. offset+len(sessions)`` of ``total`` matching the filter, most
    recently active first (ties by id)."""

    sessions: list[SessionStats]
    total: int
    offset: int


@dataclass(slots=True)
class Sidecar:
    """Approval requests and audit records that commit in a journal append's own transaction
    (all of it or none: a suspension, its approvals and its audit records agree).

    Each approval goes with its ``approval.requested`` record; when a pending approval of the
    same session and interrupt already exists it is kept, and ``audit`` records naming the
    new approval's id name the existing one instead (see :func:`sidecar_audit`).
    """

    approvals: list[tuple[Approval, AuditEvent]] = field(default_factory=list)
    audit: list[AuditEvent] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    """Interrupt ids a suspension keeps from before its run (targeted resume): their rows
    stay as they are, and one decided meanwhile makes the suspended session ``ready``."""

    def __bool__(self) -> bool:
        return bool(self.approvals or self.audit or self.held)


def sidecar_audit(
    sidecar: Sidecar, inserted: list[AuditEvent], kept: dict[str, str]
) -> list[AuditEvent]:
    """The audit records to chain for ``sidecar``: the ``approval.requested`` records of the
    approvals inserted, then its own records with ``kept`` (new id -> existing id) applied."""
    from tether.durable.audit import AuditEvent

    out = list(inserted)
    for item in sidecar.audit:
        found = item.data.get("approval_id")
        if isinstance(found, str) and found in kept:
            item = AuditEvent(
                item.event, {**item.data, "approval_id": kept[found]}, item.session_id
            )
        out.append(item)
    return out


@runtime_checkable
class Store(Protocol):
    """Async session journal store. See docs/durability.md for the guarantees.

    ``approvals``, ``audit`` and ``approvers`` live in the same database (docs/design.md s. 8).
    """

    @property
    def approvals(self) -> Approvals: ...
    @property
    def audit(self) -> AuditLog: ...
    @property
    def approvers(self) -> Approvers: ...
    @property
    def memory_entries(self) -> MemoryEntries:
        """Long-term memory entries by scope (``tether.tools.memory``)."""
        ...

    async def create(
        self, session_id: str, *, metadata: dict[str, Any] | None = None
    ) -> SessionRecord: ...
    async def load(
        self, session_id: str, *, known_version: int | None = None
    ) -> SessionRecord | None:
        """The session (None if absent). ``known_version``: the caller already holds the
        fold at that version; while the session is still there, the record carries no
        snapshot and no entries (nothing is read or decoded)."""
        ...

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
        """Append ``entries`` after ``expected_version`` (compare-and-set, under ``lease``);
        ``sidecar``'s approvals and audit records commit in the same transaction."""
        ...

    async def read_entries(
        self, session_id: str, after_seq: int = 0, *, until_seq: int | None = None
    ) -> list[Entry]: ...
    async def acquire_lease(
        self, session_id: str, *, ttl: float = 30.0, create: bool = False
    ) -> Lease:
        """Take the session's lease (``SessionBusy`` while another live holder has it);
        ``create``: a missing session is created first, in the same transaction."""
        ...

    async def renew_lease(self, lease: Lease, *, ttl: float = 30.0) -> Lease: ...
    async def release_lease(self, lease: Lease) -> None: ...
    async def set_status(self, session_id: str, status: SessionStatus) -> None: ...
    async def list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]: ...
    async def session_page(
        self,
        *,
        status: SessionStatus | None = None,
        search: str | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> SessionPage:
        """Sessions most recently active first, with usage and pending-approval counts
        (see :mod:`tether.durable.session_list`)."""
        ...

    async def delete(self, session_id: str) -> None: ...
    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class EncodedEntry:
    """An entry validated and encoded, ready to insert."""

    seq: int
    kind: JournalKind
    text: str


def encode_entries(
    session_id: str,
    expected_version: int,
    entries: Sequence[tuple[JournalKind, dict[str, Any]]],
    status: SessionStatus | None,
) -> list[EncodedEntry]:
    """Validate an append's arguments and encode every entry before anything is written."""
    if expected_version < 0:
        raise InputError(f"expected_version must be >= 0, got {expected_version}")
    check_status(status)
    out: list[EncodedEntry] = []
    for offset, pair in enumerate(entries, start=1):
        kind, data = pair
        if kind not in JOURNAL_KINDS:
            raise InputError(f"unknown journal kind {kind!r}; known: {sorted(JOURNAL_KINDS)}")
        if not isinstance(data, dict):
            raise InputError(f"journal entry data must be a dict, got {type(data).__name__}")
        what = f"journal entry {kind!r} of session {session_id}"
        out.append(
            EncodedEntry(
                expected_version + offset, kind, encode_json(data, what=what, root="$.data")
            )
        )
    return out


def check_status(status: str | None) -> None:
    """Raise ValueError for a status that is not a :data:`SessionStatus`."""
    if status is not None and status not in SESSION_STATUSES:
        raise InputError(f"unknown session status {status!r}; known: {sorted(SESSION_STATUSES)}")


def check_ttl(ttl: float) -> None:
    """Raise ValueError for a non-positive lease ttl."""
    if not ttl > 0:
        raise InputError(f"lease ttl must be > 0 seconds, got {ttl}")


def encode_metadata(session_id: str, metadata: dict[str, Any] | None) -> str:
    """Canonical JSON of session metadata (``{}`` when None)."""
    return encode_json(metadata or {}, what=f"metadata of session {session_id}", root="$.metadata")


class Holder:
    """This store object's identity as a lease holder: host, pid, random tokens."""

    def __init__(self) -> None:
        self.host = socket.gethostname()
        self.held: dict[str, str] = {}  # session id -> token this object currently holds

    def new_token(self) -> str:
        return secrets.token_hex(16)

    def lease(self, session_id: str, token: str, expires_at: float) -> Lease:
        pid = os.getpid()
        return Lease(
            session_id, token, holder_name(self.host, pid, token), self.host, pid, expires_at
        )


def holder_name(host: str, pid: int, token: str) -> str:
    """Human-readable holder: ``host:pid:token-prefix``."""
    return f"{host}:{pid}:{token[:8]}"


def can_take(
    holder: Holder,
    session_id: str,
    token: str | None,
    host: str | None,
    pid: int | None,
    expires: float | None,
    now: float,
) -> bool:
    """Whether ``holder`` may take a lease currently described by the other arguments."""
    if token is None or expires is None or expires <= now:
        return True
    if holder.held.get(session_id) == token:
        return True
    return host == holder.host and pid is not None and pid != os.getpid() and not pid_alive(pid)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: alive, owned by another user
        return True
    return True


def lease_from_row(
    session_id: str,
    token: str | None,
    holder: str | None,
    host: str | None,
    pid: int | None,
    expires: float | None,
) -> Lease | None:
    """The Lease stored in a session row, if any."""
    if token is None or expires is None:
        return None
    return Lease(session_id, token, holder or "", host or "", int(pid or 0), float(expires))


def record_from_row(session_id: str, row: Sequence[Any], entries: list[Entry]) -> SessionRecord:
    """The SessionRecord of a ``schema.SESSION_COLS`` row and its decoded entries (those
    from its snapshot on, plus older snapshots): the one layout both databases read."""
    snap = int(row[5])
    before = [e for e in entries if e.seq < snap]
    entries = entries[len(before) :]
    snapshot = entries.pop(0) if snap and entries and entries[0].seq == snap else None
    return SessionRecord(
        session_id=session_id,
        version=int(row[0]),
        status=row[1],
        snapshot=snapshot,
        entries=entries,
        lease=lease_from_row(session_id, *row[6:11]),
        created_at=row[2],
        updated_at=row[3],
        metadata=decode_object(row[4], what=f"metadata of session {session_id!r}"),
        snapshot_seq=snap,
        earlier_snapshots=before,
    )


def next_token(holder: Holder, session_id: str, current: str | None) -> str:
    """Keep our token when re-acquiring our own lease, else mint a new one."""
    if current is not None and holder.held.get(session_id) == current:
        return current
    return holder.new_token()
