"""Full-text search over the journal text of past sessions: what every store shares.

What is indexed: the text of each ``message`` entry whose role is ``user``, ``assistant``
or ``tool``: its text blocks and its tool results' content, joined by one space, at most
:data:`BODY_MAX` characters (the rest of a long tool output is not searchable). System
prompts, reasoning blocks, tool-call arguments and every other entry kind are not
indexed. SQLite keeps the index in an FTS5 table, PostgreSQL in a ``tsvector`` column with
a GIN index; both are written in the append's own transaction (schema migration 5 indexes
the sessions already there). MemoryStore scans its entries.

Matching is by words: letters and digits (``[^\\W_]+``), case-insensitive, no stemming;
an entry matches when it holds any of the query's words, ranked by relevance (SQLite's
bm25, PostgreSQL's ``ts_rank``, the count of matching words on MemoryStore), then most
recent first. The query is untrusted (a model writes it): it is cut into words in Python
and only words reach the database (quoted for FTS5, through ``websearch_to_tsquery`` on
PostgreSQL), at most :data:`QUERY_MAX` characters, :data:`TERMS_MAX` words, and
:data:`HITS_MAX` hits. A scope is a session-id glob (``*`` any run of characters, ``?``
one; case-sensitive on every store), applied in the store's query.

The hits carry the raw text: redacting it (and cutting the snippet) is governance's
(:mod:`tether.governance.search`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from tether.errors import InputError

BODY_MAX: Final = 32_768
"""Characters of one entry's text that are indexed."""
QUERY_MAX: Final = 500
"""Characters of a query."""
TERMS_MAX: Final = 16
"""Words of a query that count (the rest are ignored)."""
TERM_MAX: Final = 64
"""Characters of one query word (a longer word is cut)."""
HITS_MAX: Final = 200
"""Hits one store query returns at most."""
SCOPE_MAX: Final = 300
"""Characters of a scope glob."""
ROLES: Final = ("user", "assistant", "tool")
SKIPPED_TOOL: Final = "session_search"
"""The results of the ``session_search`` tool (by its default name) are not indexed: a
search would find earlier searches' snippets. (No session before migration 5 holds one.)"""

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class TextQuery:
    """One search as the store runs it: words already parsed (:func:`parse_terms`)."""

    terms: tuple[str, ...]
    scope: str = "*"
    """A session-id glob (``*`` and ``?``)."""
    exclude: tuple[str, ...] = ()
    """Session ids left out (the asking agent's own session, say)."""
    limit: int = 50


@dataclass(frozen=True, slots=True)
class TextHit:
    """One matching journal entry, as stored (raw: not redacted)."""

    session_id: str
    seq: int
    at: float
    role: str
    text: str
    rank: float
    """Higher is better (comparable within one query only)."""


@runtime_checkable
class SessionSearch(Protocol):
    """The store side of session search: implemented by the three stores."""

    async def search_text(self, query: TextQuery) -> list[TextHit]:
        """The best ``query.limit`` entries matching any of ``query.terms`` in sessions
        whose id matches ``query.scope``, best first."""
        ...


def parse_terms(query: str) -> tuple[str, ...]:
    """The words of an untrusted query, lowercased, deduplicated, bounded; an
    :class:`InputError` for a query that is too long or not text."""
    if not isinstance(query, str):
        raise InputError(f"a search query must be a string, got {type(query).__name__}")
    if len(query) > QUERY_MAX:
        raise InputError(
            f"the search query is {len(query)} characters long; at most {QUERY_MAX} are allowed"
        )
    words: list[str] = []
    for match in _WORD.finditer(query.lower()):
        word = match.group()[:TERM_MAX]
        if word not in words:
            words.append(word)
        if len(words) == TERMS_MAX:
            break
    return tuple(words)


def words_of(text: str) -> set[str]:
    """The words of ``text`` as queries match them."""
    return {w[:TERM_MAX] for w in _WORD.findall(text.lower())}


def check_query(query: TextQuery) -> None:
    """Raise InputError for a query no store runs."""
    if not 0 <= query.limit <= HITS_MAX:
        raise InputError(f"search limit must be between 0 and {HITS_MAX}, got {query.limit}")
    check_scope(query.scope)


def check_scope(scope: str) -> None:
    """Raise InputError for a scope that is not a short session-id glob."""
    if not isinstance(scope, str) or not scope:
        raise InputError(f"a search scope must be a non-empty session-id glob, got {scope!r}")
    if len(scope) > SCOPE_MAX:
        raise InputError(f"a search scope is at most {SCOPE_MAX} characters, got {len(scope)}")


def like_pattern(scope: str) -> str:
    """The glob as a LIKE pattern with ``\\`` as its escape character (PostgreSQL)."""
    out = []
    for char in scope:
        if char in "\\%_":
            out.append("\\" + char)
        else:
            out.append({"*": "%", "?": "_"}.get(char, char))
    return "".join(out)


def sqlite_glob(scope: str) -> str:
    """The glob as SQLite's GLOB pattern (``[`` is literal: escaped as ``[[]``)."""
    return scope.replace("[", "[[]")


def scope_regex(scope: str) -> re.Pattern[str]:
    """The glob as a regular expression (MemoryStore)."""
    parts = [{"*": ".*", "?": "."}.get(c, re.escape(c)) for c in scope]
    return re.compile("".join(parts), re.DOTALL)


def fts5_query(terms: tuple[str, ...]) -> str:
    """An FTS5 MATCH expression: each word a quoted string, any of them."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def entry_text(kind: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """``(role, text)`` an entry adds to the index, None when it adds nothing. Schema
    migration 5 computes the same text in SQL for the entries already stored."""
    if kind != "message":
        return None
    message = data.get("message")
    if not isinstance(message, dict) or message.get("role") not in ROLES:
        return None
    blocks = message.get("content")
    if not isinstance(blocks, list):
        return None
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind_of = block.get("type")
        if kind_of == "tool_result" and block.get("name") == SKIPPED_TOOL:
            continue
        value = (
            block.get("text")
            if kind_of == "text"
            else block.get("content")
            if kind_of == "tool_result"
            else None
        )
        if isinstance(value, str):
            parts.append(value)
    body = " ".join(parts)[:BODY_MAX]
    return (message["role"], body) if body else None


def index_rows(
    expected_version: int, entries: Sequence[tuple[str, dict[str, Any]]]
) -> list[tuple[int, str, str]]:
    """``(seq, role, text)`` of the entries of one append that the index holds."""
    out: list[tuple[int, str, str]] = []
    for offset, (kind, data) in enumerate(entries, start=1):
        found = entry_text(kind, data)
        if found is not None:
            out.append((expected_version + offset, *found))
    return out
