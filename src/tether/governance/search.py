"""Session search as people and models see it: the store's hits through the one redaction path.

The store matches the raw journal text (:mod:`tether.durable.session_search`). Each hit's
text is redacted as ``sessions show`` redacts that session (the masks of its whole agent
tree, :func:`~tether.governance.redaction_tree.load_tree_masks`, then secret-looking
tokens), and a hit counts only when one of the query's words is still in the redacted
text: a query for a masked value (or a word inside one) finds nothing, so a search
cannot confirm a secret. The snippet is cut from the redacted text around the first
word found, on one line, at most :data:`SNIPPET_MAX` characters. It is still untrusted
text: a terminal or a page escapes it.

The hits are ordered by what the redacted text holds: the number of the query's words
found in it, then newest first; that number is the ``rank`` shown. The store's relevance
(bm25, ``ts_rank``) only chooses the order in which candidates are read (at most 4 per
hit wanted, until ``limit`` hits are found): it counted the masked words too, so neither
the order nor a rank shown depends on a masked value. What remains: when more entries
match than are shown, which of them make the cut can. ``tether sessions search``, ``GET
/api/sessions?q=`` and the ``session_search`` tool all call :func:`search_sessions`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tether.durable.session_search import (
    HITS_MAX,
    SessionSearch,
    TextQuery,
    check_scope,
    parse_terms,
    words_of,
)
from tether.errors import InputError
from tether.governance.masks import Masker

if TYPE_CHECKING:
    from tether.durable.approval_types import Redactor
    from tether.durable.store import Store

SNIPPET_MAX: Final = 240
"""Characters of one snippet."""
LIMIT_MAX: Final = 50
"""Hits one search returns at most."""
_BEFORE: Final = 60
_CANDIDATES: Final = 4
"""Store hits read per hit wanted (some may be dropped by the redaction)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: where it is and a redacted snippet of the entry's text."""

    session_id: str
    seq: int
    at: float
    role: str
    snippet: str
    rank: float
    """The number of the query's words the redacted text holds (higher first)."""

    def json(self) -> dict[str, Any]:
        """The JSON form (CLI ``--json``, the API, the tool's result)."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at))
        return {
            "session_id": self.session_id,
            "seq": self.seq,
            "at": self.at,
            "time": when,
            "role": self.role,
            "snippet": self.snippet,
            "rank": round(self.rank, 6),
        }


def can_search(store: Any) -> bool:
    """Whether ``store`` implements session search (the three stores of tether do)."""
    return isinstance(store, SessionSearch)


async def search_sessions(
    store: Store,
    query: str,
    *,
    scope: str = "*",
    exclude: Iterable[str] = (),
    limit: int = 10,
    redactor: Redactor | None = None,
) -> list[SearchHit]:
    """The best ``limit`` redacted hits for ``query`` in the sessions ``scope`` matches
    (a session-id glob), leaving out ``exclude``. ``redactor``: the agent's custom
    redactor when known (the default masks always apply). An :class:`InputError` for a
    query, scope or limit out of bounds; a query without words finds nothing."""
    terms = parse_terms(query)
    check_scope(scope)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise InputError(f"search limit must be between 1 and {LIMIT_MAX}, got {limit!r}")
    if not terms:
        return []
    if not isinstance(store, SessionSearch):
        raise InputError(f"{type(store).__name__} has no session search (search_text)")
    wanted = TextQuery(terms, scope, tuple(exclude), min(limit * _CANDIDATES, HITS_MAX))
    raw = await store.search_text(wanted)
    maskers: dict[str, Masker] = {}
    out: list[SearchHit] = []
    for index, hit in enumerate(raw):
        if hit.session_id not in maskers:  # the next sessions' masks, read concurrently
            ahead = list(
                dict.fromkeys(h.session_id for h in raw[index:] if h.session_id not in maskers)
            )
            ahead = ahead[: limit - len(out)]
            made = await asyncio.gather(*(_masker(store, sid, redactor) for sid in ahead))
            maskers.update(zip(ahead, made, strict=True))
        shown = maskers[hit.session_id].text(hit.text)
        found = words_of(shown)
        matched = [t for t in terms if t in found]
        if not matched:
            continue  # the query's words were only inside what the redaction hides
        text = snippet(shown, matched)
        out.append(SearchHit(hit.session_id, hit.seq, hit.at, hit.role, text, len(matched)))
        if len(out) == limit:
            break
    # ordered by the redacted text only: the store's relevance counted the masked words too
    out.sort(key=lambda h: (-h.rank, -h.at, h.session_id, h.seq))
    return out


async def _masker(store: Store, session_id: str, redactor: Redactor | None) -> Masker:
    """The masks ``sessions show`` applies to this session (its agent tree's)."""
    from tether.governance.redaction_tree import load_tree_masks

    tree = await load_tree_masks(store, session_id, redactor)
    return Masker(redactor, tree.masks, set(tree.hidden))


def snippet(text: str, words: list[str]) -> str:
    """One line of ``text`` (already redacted) around the first of ``words`` it holds."""
    line = " ".join(text.split())
    start = len(line)
    for word in words:
        match = re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", line, re.IGNORECASE)
        if match is not None:
            start = min(start, match.start())
    if start == len(line):
        start = 0
    begin = max(0, start - _BEFORE)
    if begin:  # start at a word boundary when there is one close by
        space = line.find(" ", begin, start)
        begin = space + 1 if space != -1 else begin
    end = begin + SNIPPET_MAX - (1 if begin else 0)
    cut = line[begin:end]
    if end < len(line):
        cut = cut[:-1] + "…"
    return ("…" if begin else "") + cut
