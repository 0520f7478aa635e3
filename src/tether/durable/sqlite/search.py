"""Session search on SQLite: the FTS5 index (schema migration 5), written inside the
append's transaction and queried in one read transaction
(:mod:`tether.durable.session_search`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tether.durable.session_search import (
    TextHit,
    TextQuery,
    check_query,
    fts5_query,
    sqlite_glob,
)

if TYPE_CHECKING:
    import sqlite3

    from tether.durable.sqlite.connections import SQLiteConnections


def write_index(
    conn: sqlite3.Connection, session_id: str, at: float, rows: Sequence[tuple[int, str, str]]
) -> None:
    """Index one append's ``(seq, role, text)`` rows, inside its write transaction."""
    for seq, role, body in rows:
        cur = conn.execute(
            "INSERT INTO search_rows (session_id, seq, role, at) VALUES (?, ?, ?, ?)",
            (session_id, seq, role, at),
        )
        conn.execute("INSERT INTO search_text (rowid, body) VALUES (?, ?)", (cur.lastrowid, body))


def delete_index(conn: sqlite3.Connection, session_id: str) -> None:
    """Drop a deleted session's rows from the index, inside the delete's transaction."""
    conn.execute(
        "DELETE FROM search_text WHERE rowid IN (SELECT id FROM search_rows WHERE session_id = ?)",
        (session_id,),
    )
    conn.execute("DELETE FROM search_rows WHERE session_id = ?", (session_id,))


class SQLiteSearch:
    """The search of one SQLiteStore; runs inside the store's ``@offloaded`` call."""

    def __init__(self, store: SQLiteConnections) -> None:
        self._sql = store

    def run(self, query: TextQuery) -> list[TextHit]:
        check_query(query)
        if not query.terms or query.limit == 0:
            return []
        skip = ""
        if query.exclude:
            skip = f"AND r.session_id NOT IN ({','.join('?' * len(query.exclude))}) "
        with self._sql.transaction("BEGIN") as conn:
            rows = conn.execute(
                "SELECT r.session_id, r.seq, r.at, r.role, t.body, bm25(search_text) AS score "
                "FROM search_text t JOIN search_rows r ON r.id = t.rowid "
                f"WHERE search_text MATCH ? AND r.session_id GLOB ? {skip}"
                "ORDER BY score, r.at DESC, r.session_id, r.seq LIMIT ?",
                (fts5_query(query.terms), sqlite_glob(query.scope), *query.exclude, query.limit),
            ).fetchall()
        return [TextHit(r[0], int(r[1]), float(r[2]), r[3], r[4], -float(r[5])) for r in rows]
