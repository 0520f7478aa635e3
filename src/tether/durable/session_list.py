"""``store.session_page``: one page of sessions with their counts, for the sessions list.

The filtering, ordering, paging and the pending-approval count happen in the store's
query (one read transaction); the usage counts are summed from the ``usage`` entries
(one per run) of the page's sessions only, so a page costs the same with 20 or 20,000
sessions in the store. The first prompt is read from the page's sessions only too
(:mod:`tether.durable.session_prompt`: bounded, and redacted like every view). Search is a case-sensitive substring of the session id (the
same on every store: SQLite's ``lower()`` folds ASCII only, PostgreSQL's a locale).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from tether.durable.approval_types import APPROVAL_COLS, Approval, approval_from_row
from tether.durable.rules import installed
from tether.durable.session_prompt import READ_MAX, prompt_text
from tether.durable.store import SessionStatus, check_status
from tether.errors import InputError
from tether.messages import add_cost, read_cost

if TYPE_CHECKING:
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


Row = tuple[str, str, int, float, float, int]
"""(id, status, version, created_at, updated_at, pending approvals) as queried."""


def check_page(search: str | None, offset: int, limit: int) -> None:
    """Raise InputError for paging arguments no store accepts."""
    if offset < 0 or limit < 0:
        raise InputError(f"offset and limit must be >= 0, got offset={offset}, limit={limit}")
    if search is not None and len(search) > SEARCH_MAX:
        raise InputError(f"search text is longer than {SEARCH_MAX} characters")


@dataclass(slots=True)
class PromptRows:
    """What the first prompts of a page are made of, as queried: per session the head
    and length of its first ``message`` entry, the data of its assistant messages with
    tool calls, and its approval rows."""

    heads: dict[str, tuple[str, int]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)

    def prompts(self) -> dict[str, str | None]:
        calls: dict[str, list[dict[str, Any]]] = {}
        for sid, text in self.calls:
            try:
                calls.setdefault(sid, []).append(json.loads(text))
            except ValueError:
                continue  # an unreadable entry hides nothing; the timeline names it
        rows: dict[str, list[Approval]] = {}
        for approval in self.approvals:
            rows.setdefault(approval.session_id, []).append(approval)
        shown_prompt = installed().shown_prompt  # governance's redaction (durable/rules.py)
        return {
            sid: shown_prompt(prompt_text(head, size), calls.get(sid, ()), rows.get(sid, ()))
            for sid, (head, size) in self.heads.items()
        }


TOOL_CALL_MARK: Final = '"type":"tool_call"'
"""In an entry's canonical JSON only where a message holds a tool call (a string value
with these characters is escaped: ``\\"type\\"...``)."""


def build_page(
    rows: list[Row],
    usage: Iterable[tuple[str, str]],
    total: int,
    offset: int,
    prompts: PromptRows | None = None,
) -> SessionPage:
    """The page from the queried rows and the ``(session_id, data)`` of their usage entries."""
    sums: dict[str, dict[str, int]] = {r[0]: dict.fromkeys(USAGE_KEYS, 0) for r in rows}
    costs: dict[str, Decimal | None] = {}
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
        cost = read_cost(data.get("cost"))
        if cost is not None:
            costs[session_id] = add_cost(costs.get(session_id), cost)
    first = prompts.prompts() if prompts is not None else {}
    return SessionPage(
        [
            SessionStats(
                sid,
                status,  # type: ignore[arg-type]
                int(version),
                float(created),
                float(updated),
                **sums[sid],
                cost=costs.get(sid),
                pending_approvals=int(pending),
                first_prompt=first.get(sid),
            )
            for sid, status, version, created, updated, pending in rows
        ],
        int(total),
        offset,
    )


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
        prompts = PromptRows()
        if rows:
            ids = [r[0] for r in rows]
            marks = ",".join("?" * len(rows))
            usage = conn.execute(
                f"SELECT session_id, data FROM entries WHERE session_id IN ({marks}) "
                "AND kind = 'usage'",
                ids,
            ).fetchall()
            for sid in ids:  # walks the (session_id, seq) key to the first message only
                head = conn.execute(
                    "SELECT substr(data, 1, ?), length(data) FROM entries WHERE "
                    "session_id = ? AND kind = 'message' ORDER BY seq LIMIT 1",
                    (READ_MAX, sid),
                ).fetchone()
                if head is not None:
                    prompts.heads[sid] = (head[0], int(head[1]))
            prompts.calls = conn.execute(
                f"SELECT session_id, data FROM entries WHERE session_id IN ({marks}) "
                "AND kind = 'message' AND instr(data, ?) > 0",
                (*ids, TOOL_CALL_MARK),
            ).fetchall()
            prompts.approvals = [
                approval_from_row(r)
                for r in conn.execute(
                    f"SELECT {APPROVAL_COLS} FROM approvals WHERE session_id IN ({marks})", ids
                ).fetchall()
            ]
    return build_page(rows, usage, total, offset, prompts)


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
        prompts = PromptRows()
        if rows:
            ids = [r[0] for r in rows]
            cur = await conn.execute(
                "SELECT session_id, data FROM entries WHERE session_id = ANY(%s) "
                "AND kind = 'usage'",
                (ids,),
            )
            usage = await cur.fetchall()
            cur = await conn.execute(
                "SELECT s.id, m.head, m.size FROM unnest(%s::text[]) AS s(id) CROSS JOIN "
                "LATERAL (SELECT left(data, %s) AS head, length(data) AS size FROM entries "
                "WHERE session_id = s.id AND kind = 'message' ORDER BY seq LIMIT 1) AS m",
                (ids, READ_MAX),
            )
            for sid, head, size in await cur.fetchall():
                prompts.heads[sid] = (head, int(size))
            cur = await conn.execute(
                "SELECT session_id, data FROM entries WHERE session_id = ANY(%s) "
                "AND kind = 'message' AND strpos(data, %s) > 0",
                (ids, TOOL_CALL_MARK),
            )
            prompts.calls = await cur.fetchall()
            cur = await conn.execute(
                f"SELECT {APPROVAL_COLS} FROM approvals WHERE session_id = ANY(%s)", (ids,)
            )
            prompts.approvals = [approval_from_row(r) for r in await cur.fetchall()]
    return build_page(rows, usage, total, offset, prompts)
