"""The audit log: append-only, hash-chained records in the session store.

Record ``n`` is stored as its canonical JSON *body* (``seq``, ``at``, ``event``,
``session_id``, ``data``) with ``hash = sha256(prev_hash + body)`` where
``prev_hash`` is record ``n-1``'s hash (64 zeros for the first). A one-row *head*
(last seq and hash) is updated in the same transaction as every append, so
truncating the tail is detected too. The ``at``, ``event`` and ``session_id`` columns
are copies of body fields kept for queries (``audit show`` filters on ``session_id``):
:func:`verify_rows` checks each against its hashed body, so editing a column is detected
like editing the body. Each store implements ``_append`` and ``_rows``.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final, NamedTuple, Protocol

from tether.durable.entries import encode_json
from tether.durable.errors import AuditHeadCorrupt

GENESIS: Final = "0" * 64
_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """A record to append: what happened (``event``), to which session, and its data."""

    event: str
    data: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """A stored audit record with its place in the chain."""

    seq: int
    at: float
    event: str
    session_id: str | None
    data: dict[str, Any]
    prev_hash: str
    hash: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StoredRow(NamedTuple):
    """One audit row as stored: its seq, body, prev_hash, hash and the query columns
    ``at``, ``event`` and ``session_id`` (copies of body fields, checked by verify)."""

    seq: int
    body: str
    prev_hash: str
    hash: str
    at: float
    event: str
    session_id: str | None

    def values(self) -> tuple[Any, ...]:
        """The column values in INSERT order (seq, at, event, session_id, body, prev, hash)."""
        return (
            self.seq,
            self.at,
            self.event,
            self.session_id,
            self.body,
            self.prev_hash,
            self.hash,
        )


ROW_COLS: Final = "seq, body, prev_hash, hash, at, event, session_id"
"""The columns to SELECT for :class:`StoredRow` (in its field order)."""
INSERT_COLS: Final = "seq, at, event, session_id, body, prev_hash, hash"
"""The columns of :meth:`StoredRow.values`."""


def parse_head(raw: Sequence[Any] | None) -> tuple[int, str]:
    """The (seq, hash) of the stored head row; :class:`AuditHeadCorrupt` when it is
    missing or does not hold a record count and a SHA-256 hex digest."""
    if raw is None:
        raise AuditHeadCorrupt("missing")
    seq, digest = raw
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise AuditHeadCorrupt(f"corrupt (its seq is {seq!r}, not a record count)")
    if not isinstance(digest, str) or _HASH.fullmatch(digest) is None:
        raise AuditHeadCorrupt(f"corrupt (its hash is {digest!r}, not a SHA-256 hex digest)")
    return seq, digest


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of :meth:`AuditLog.verify`: ``first_bad`` is (position, reason) or None."""

    ok: bool
    checked: int
    first_bad: tuple[int, str] | None
    head: tuple[int, str]
    """The chain head (last seq, last hash) as stored: anchor it elsewhere to detect rewrites."""


def body_text(seq: int, at: float, item: AuditEvent) -> str:
    record = {
        "seq": seq,
        "at": at,
        "event": item.event,
        "session_id": item.session_id,
        "data": item.data,
    }
    return encode_json(record, what=f"audit record {item.event!r}", root="$")


def link(prev_hash: str, body: str) -> str:
    return hashlib.sha256((prev_hash + body).encode("utf-8")).hexdigest()


def chain(head: Sequence[Any] | None, items: Sequence[AuditEvent]) -> list[StoredRow]:
    """Rows for ``items`` appended after the stored ``head`` row (the caller holds its lock)."""
    head_seq, head_hash = parse_head(head)
    now = time.time()
    out: list[StoredRow] = []
    prev = head_hash
    for offset, item in enumerate(items, start=1):
        seq = head_seq + offset
        body = body_text(seq, now, item)
        digest = link(prev, body)
        out.append(StoredRow(seq, body, prev, digest, now, item.event, item.session_id))
        prev = digest
    return out


def decode(row: StoredRow) -> AuditRecord:
    body = json.loads(row.body)
    return AuditRecord(
        seq=row.seq,
        at=float(body["at"]),
        event=body["event"],
        session_id=body["session_id"],
        data=body["data"],
        prev_hash=row.prev_hash,
        hash=row.hash,
    )


def verify_rows(rows: Sequence[StoredRow], head: tuple[int, str]) -> VerifyReport:
    """Walk the chain: the first record that is missing, moved, edited, or cut off."""
    prev = GENESIS
    expected = 1
    for row in rows:
        bad = _check(row, expected, prev)
        if bad is not None:
            return VerifyReport(False, expected - 1, (expected, bad), head)
        prev = row.hash
        expected += 1
    last = expected - 1
    if head != (last, prev):
        reason = (
            f"the chain ends at record {last} but its head says {head[0]} records "
            f"(hash {head[1][:12]}…): records were removed from the end (truncated) or the head was edited"
        )
        return VerifyReport(False, last, (last + 1, reason), head)
    return VerifyReport(True, last, None, head)


def _check(row: StoredRow, expected: int, prev: str) -> str | None:
    if row.seq != expected:
        return f"record {expected} is missing (the next stored record is {row.seq}): deleted"
    try:
        body = json.loads(row.body)
        seq = body["seq"]
    except (ValueError, TypeError, KeyError):
        return f"record {expected}: its body is not a valid audit record (edited)"
    if seq != expected:
        return f"record {expected} holds the body of record {seq}: records were reordered"
    if row.prev_hash != prev:
        return f"record {expected} does not link to record {expected - 1} (prev_hash differs)"
    if link(prev, row.body) != row.hash:
        return f"record {expected} was edited: its hash does not match its content"
    for column in ("at", "event", "session_id"):
        stored, hashed = getattr(row, column), body.get(column)
        if column == "at":
            same = isinstance(stored, int | float) and isinstance(hashed, int | float)
            same = same and float(stored) == float(hashed)
        else:
            same = type(stored) is type(hashed) and stored == hashed
        if not same:
            return (
                f"record {expected} was edited: its {column} column is {stored!r} but its hashed "
                f"body says {hashed!r}"
            )
    return None


class AuditLog(Protocol):
    """``store.audit``: see :class:`AuditBase`."""

    async def append(
        self, event: str, data: dict[str, Any] | None = None, *, session_id: str | None = None
    ) -> AuditRecord: ...
    async def append_many(self, items: Sequence[AuditEvent]) -> list[AuditRecord]: ...
    async def records(
        self, session_id: str | None = None, after: int = 0, limit: int | None = None
    ) -> list[AuditRecord]: ...
    async def verify(self) -> VerifyReport: ...
    async def export(self) -> list[dict[str, Any]]: ...


class AuditBase:
    """The audit API on two store primitives: ``_append`` (under the head lock) and ``_rows``."""

    async def _append(self, items: Sequence[AuditEvent]) -> list[StoredRow]:
        raise NotImplementedError

    async def _rows(
        self, session_id: str | None, after: int, limit: int | None
    ) -> tuple[list[StoredRow], Sequence[Any] | None]:
        """Rows in seq order, and the head row as stored (read in the same snapshot)."""
        raise NotImplementedError

    async def append(
        self, event: str, data: dict[str, Any] | None = None, *, session_id: str | None = None
    ) -> AuditRecord:
        """Append one record (payload-free data: ids, names, hashes, outcomes)."""
        [row] = await self._append([AuditEvent(event, data or {}, session_id)])
        return decode(row)

    async def append_many(self, items: Sequence[AuditEvent]) -> list[AuditRecord]:
        """Append several records in one transaction."""
        return [decode(row) for row in await self._append(list(items))] if items else []

    async def records(
        self, session_id: str | None = None, after: int = 0, limit: int | None = None
    ) -> list[AuditRecord]:
        """Records in chain order (of one session, when given), after seq ``after``."""
        rows, _ = await self._rows(session_id, after, limit)
        return [decode(row) for row in rows]

    async def verify(self) -> VerifyReport:
        """Walk the whole chain and report the first broken link (:class:`AuditHeadCorrupt`
        when the head row is missing or garbled)."""
        rows, head = await self._rows(None, 0, None)
        return verify_rows(rows, parse_head(head))

    async def export(self) -> list[dict[str, Any]]:
        """Every record as a dict (seq, at, event, session_id, data, prev_hash, hash)."""
        return [record.to_dict() for record in await self.records()]
