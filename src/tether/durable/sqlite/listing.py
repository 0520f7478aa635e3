"""``SQLiteStore.session_page``: one read transaction (what the stores share:
:mod:`tether.durable.session_list`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.durable.approval_types import APPROVAL_COLS, approval_from_row
from tether.durable.session_list import (
    PENDING,
    TOOL_CALL_MARK,
    PromptRows,
    Row,
    build_page,
    check_page,
    where_clause,
)
from tether.durable.session_prompt import READ_MAX
from tether.durable.store import SessionPage, SessionStatus, check_status

if TYPE_CHECKING:
    from tether.durable.sqlite.connections import SQLiteConnections


class SQLiteListing:
    """The sessions list of one SQLiteStore; runs inside the store's ``@offloaded`` call."""

    def __init__(self, store: SQLiteConnections) -> None:
        self._sql = store

    def page(
        self, status: SessionStatus | None, search: str | None, offset: int, limit: int
    ) -> SessionPage:
        check_status(status)
        check_page(search, offset, limit)
        where, args = where_clause(status, search, "?", "instr")
        with self._sql.transaction("BEGIN") as conn:
            total = conn.execute(f"SELECT count(*) FROM sessions s {where}", args).fetchone()[0]
            rows: list[Row] = conn.execute(
                f"SELECT id, status, version, created_at, updated_at, {PENDING} FROM sessions s "
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
                        f"SELECT {APPROVAL_COLS} FROM approvals WHERE session_id IN ({marks})",
                        ids,
                    ).fetchall()
                ]
        return build_page(rows, usage, total, offset, prompts)
