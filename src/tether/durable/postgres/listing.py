"""``PostgresStore.session_page``: one ``REPEATABLE READ`` read-only transaction (what
the stores share: :mod:`tether.durable.session_list`)."""

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
    from tether.durable.postgres.pool import PgConnector


class PgListing:
    """The sessions list of one PostgresStore."""

    def __init__(self, pg: PgConnector) -> None:
        self._pg = pg

    async def page(
        self, status: SessionStatus | None, search: str | None, offset: int, limit: int
    ) -> SessionPage:
        check_status(status)
        check_page(search, offset, limit)
        where, args = where_clause(status, search, "%s", "strpos")
        async with self._pg.connection("listing sessions") as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur = await conn.execute(f"SELECT count(*) FROM sessions s {where}", args)
            total = (await cur.fetchone())[0]  # type: ignore[index]
            cur = await conn.execute(
                f"SELECT id, status, version, created_at, updated_at, {PENDING} FROM sessions s "
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
