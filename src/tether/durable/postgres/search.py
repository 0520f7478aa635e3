"""Session search on PostgreSQL: the ``search_text`` table (a generated ``tsvector``
with a GIN index, schema migration 5), written by the append's own statement
(:data:`INDEX_CTE`) and queried in one read-only transaction
(:mod:`tether.durable.session_search`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from tether.durable.session_search import TextHit, TextQuery, check_query, like_pattern

if TYPE_CHECKING:
    from tether.durable.postgres.pool import PgConnector

INDEX_CTE: Final = """, x AS (
    INSERT INTO search_text (session_id, seq, role, at, body)
    SELECT s.id, t.seq, t.role, %(at)s, t.body
    FROM s, unnest(%(tseqs)s::bigint[], %(troles)s::text[], %(tbodies)s::text[])
        AS t(seq, role, body)
)"""
"""A common table expression of the append's statement (after its CAS ``s``): the index
rows commit with the entries or not at all."""


def index_params(rows: Sequence[tuple[int, str, str]]) -> dict[str, Any]:
    """The parameters of :data:`INDEX_CTE` (text cannot hold NUL in PostgreSQL: dropped)."""
    return {
        "tseqs": [r[0] for r in rows],
        "troles": [r[1] for r in rows],
        "tbodies": [r[2].replace("\x00", "") for r in rows],
    }


_SEARCH: Final = (
    "SELECT session_id, seq, at, role, body, ts_rank(tsv, q) AS score "
    "FROM search_text, websearch_to_tsquery('simple', %s) AS q "
    "WHERE tsv @@ q AND session_id LIKE %s ESCAPE '\\' AND NOT (session_id = ANY(%s)) "
    "ORDER BY score DESC, at DESC, session_id, seq LIMIT %s"
)


class PgSearch:
    """The search of one PostgresStore."""

    def __init__(self, pg: PgConnector) -> None:
        self._pg = pg

    async def run(self, query: TextQuery) -> list[TextHit]:
        check_query(query)
        if not query.terms or query.limit == 0:
            return []
        # websearch_to_tsquery never raises on its input; the words are letters and digits
        text = " or ".join(query.terms)
        args = (text, like_pattern(query.scope), list(query.exclude), query.limit)
        async with self._pg.connection("searching sessions") as conn, conn.transaction():
            await conn.execute("SET TRANSACTION READ ONLY")
            cur = await conn.execute(_SEARCH, args)
            rows = await cur.fetchall()
        return [TextHit(r[0], int(r[1]), float(r[2]), r[3], r[4], float(r[5])) for r in rows]
