"""Session search on MemoryStore: a scan of the entries (no index), with the same words
and scope as the databases (:mod:`tether.durable.session_search`)."""

from __future__ import annotations

import json

from tether.durable.memory.tables import MemoryTables
from tether.durable.session_search import (
    TextHit,
    TextQuery,
    check_query,
    entry_text,
    scope_regex,
    words_of,
)


def search_tables(tables: MemoryTables, query: TextQuery) -> list[TextHit]:
    """The best ``query.limit`` hits: rank is the number of the query's words an entry holds."""
    check_query(query)
    if not query.terms or query.limit == 0:
        return []
    scope = scope_regex(query.scope)
    wanted = set(query.terms)
    hits: list[TextHit] = []
    for session_id, row in tables.sessions.items():
        if session_id in query.exclude or scope.fullmatch(session_id) is None:
            continue
        for seq, (kind, text, at, _schema) in enumerate(row.entries, start=1):
            if kind != "message":
                continue
            try:
                data = json.loads(text)
            except ValueError:
                continue
            found = entry_text(kind, data) if isinstance(data, dict) else None
            if found is None:
                continue
            matched = len(wanted & words_of(found[1]))
            if matched:
                hits.append(TextHit(session_id, seq, at, found[0], found[1], float(matched)))
    hits.sort(key=lambda h: (-h.rank, -h.at, h.session_id, h.seq))
    return hits[: query.limit]
