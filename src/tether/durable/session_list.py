"""``store.session_page``: one page of sessions with their counts, for the sessions list.

The filtering, ordering, paging and the pending-approval count happen in the store's
query (one read transaction); the usage counts are summed from the ``usage`` entries
(one per run) of the page's sessions only, so a page costs the same with 20 or 20,000
sessions in the store. Search is a case-sensitive substring of the session id (the
same on every store: SQLite's ``lower()`` folds ASCII only, PostgreSQL's a locale).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tether.durable.store import SessionStatus, check_status
from tether.errors import InputError

if TYPE_CHECKING:
    from tether.durable.memory import MemoryStore
    from tether.durable.postgres import PostgresStore
    from tether.durable.sqlite import SQLiteStore

USAGE_KEYS: Final = ("input_tokens", "output_tokens", "model_calls", "tool_calls")
SEARCH_MAX: Final = 200


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
    pending_approvals: int = 0

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


Row = tuple[str, str, int, float, float, int]
"""(id, status, version, created_at, updated_at, pending approvals) as queried."""


def check_page(search: str | None, offset: int, limit: int) -> None:
    """Raise InputError for paging arguments no store accepts."""
    if offset < 0 or limit < 0:
        raise InputError(f"offset and limit must be >= 0, got offset={offset}, limit={limit}")
    if search is not None and len(search) > SEARCH_MAX:
        raise InputError(f"search text is longer than {SEARCH_MAX} characters")


def build_page(
    rows: list[Row], usage: Iterable[tuple[str, str]], total: int, offset: int
) -> SessionPage:
    """The page from the queried rows and the ``(session_id, data)`` of their usage entries."""
    sums: dict[str, dict[str, int]] = {r[0]: dict.fromkeys(USAGE_KEYS, 0) for r in rows}
    for session_id, text in usage:
        counts = sums.get(session_id)
        try:
            data: Any = json.loads(text).get("usage") or {}
        except (ValueError, AttributeError):
            continue  # an unreadable usage entry counts nothing; the timeline names it
        if counts is None or not isinstance(data, dict):
            continue
        for key in USAGE_KEYS:
            value = data.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                counts[key] += value
    return SessionPage(
        [
            SessionStats(
                sid,
                status,  # type: ignore[arg-type]
                int(version),
                float(created),
                float(updated),
                **sums[sid],
                pending_approvals=int(pending),
            )
            for sid, status, version, created, updated, pending in rows
        ],
        int(total),
        offset,
    )


async def memory_page(
    store: MemoryStore, status: SessionStatus | None, search: str | None, offset: int, limit: int
) -> SessionPage:
    check_status(status)
    check_page(search, offset, limit)
    pending: dict[str, int] = {}
    for approval in store._ops.approvals.values():
        if approval.status == "pending":
            pending[approval.session_id] = pending.get(approval.session_id, 0) + 1
    matching = [
        (sid, r)
        for sid, r in store._rows.items()
        if (status is None or r.status == status) and (not search or search in sid)
    ]
    matching.sort(key=lambda item: (-item[1].updated_at, item[0]))
    chosen = matching[offset : offset + limit]
    rows: list[Row] = [
        (sid, r.status, r.version, r.created_at, r.updated_at, pending.get(sid, 0))
        for sid, r in chosen
    ]
    usage = [(sid, e[1]) for sid, r in chosen for e in r.entries if e[0] == "usage"]
    return build_page(rows, usage, len(matching), offset)


def _where(status: str | None, search: str | None, mark: str, find: str) -> tuple[str, list[Any]]:
    clauses, args = [], []
    if status is not None:
        clauses.append(f"status = {mark}")
        args.append(status)
    if search:
        clauses.append(f"{find}(id, {mark}) > 0")
        args.append(search)
    return ("WHERE " + " AND ".join(clauses) + " ") if clauses else "", args


_PENDING = "(SELECT count(*) FROM approvals a WHERE a.session_id = s.id AND a.status = 'pending')"


async def sqlite_page(
    store: SQLiteStore, status: SessionStatus | None, search: str | None, offset: int, limit: int
) -> SessionPage:
    check_status(status)
    check_page(search, offset, limit)
    where, args = _where(status, search, "?", "instr")
    with store._errors(), store._tx("BEGIN") as conn:
        total = conn.execute(f"SELECT count(*) FROM sessions s {where}", args).fetchone()[0]
        rows: list[Row] = conn.execute(
            f"SELECT id, status, version, created_at, updated_at, {_PENDING} FROM sessions s "
            f"{where}ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
            (*args, limit, offset),
        ).fetchall()
        usage: list[tuple[str, str]] = []
        if rows:
            marks = ",".join("?" * len(rows))
            usage = conn.execute(
                f"SELECT session_id, data FROM entries WHERE session_id IN ({marks}) "
                "AND kind = 'usage'",
                [r[0] for r in rows],
            ).fetchall()
    return build_page(rows, usage, total, offset)


async def postgres_page(
    store: PostgresStore, status: SessionStatus | None, search: str | None, offset: int, limit: int
) -> SessionPage:
    check_status(status)
    check_page(search, offset, limit)
    where, args = _where(status, search, "%s", "strpos")
    async with store._conn("listing sessions") as conn, conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur = await conn.execute(f"SELECT count(*) FROM sessions s {where}", args)
        total = (await cur.fetchone())[0]  # type: ignore[index]
        cur = await conn.execute(
            f"SELECT id, status, version, created_at, updated_at, {_PENDING} FROM sessions s "
            f"{where}ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
            (*args, limit, offset),
        )
        rows: list[Row] = await cur.fetchall()
        usage: list[tuple[str, str]] = []
        if rows:
            cur = await conn.execute(
                "SELECT session_id, data FROM entries WHERE session_id = ANY(%s) "
                "AND kind = 'usage'",
                ([r[0] for r in rows],),
            )
            usage = await cur.fetchall()
    return build_page(rows, usage, total, offset)
