"""The sessions of one agent tree, read for redaction: the masks learned in any session of
the tree apply to every session of it (a sub-agent's masked secret stays masked in the
parent's tool result and final answer).

From a session, the reader walks up to the tree's root (each child session names its
parent in the metadata key ``tether_subagent``), then down through every session whose
id a tool call of the tree derives (``child_session_id``) and that names that parent:
one id search per session finds the readable ids (a lookup each when there are at most
16), a lookup each the hashed ones (at most
:data:`MAX_SESSIONS` per session). Bounded like the timeline's tree: :data:`MAX_DEPTH`
levels, :data:`MAX_SESSIONS` sessions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from tether.durable.claims import SUB_SESSION_KEY
from tether.governance.redaction import TreeMasks, tree_masks

if TYPE_CHECKING:
    from tether.durable.approval_types import Approval, Redactor
    from tether.durable.store import SessionRecord, Store

MAX_DEPTH: Final = 6
MAX_SESSIONS: Final = 200
_APPROVALS: Final = 10_000
_PAGE: Final = 500
_DIRECT: Final = 16


def parent_of(record: SessionRecord) -> str | None:
    """The parent session a sub-agent's session names (None: a top-level session)."""
    tree: Any = record.metadata.get(SUB_SESSION_KEY)
    parent = tree.get("parent_session") if isinstance(tree, dict) else None
    return parent if isinstance(parent, str) else None


async def tree_sessions(
    store: Store, session_id: str
) -> list[tuple[SessionRecord, list[Approval]]]:
    """Every session of ``session_id``'s agent tree (itself included) with its approval
    rows; empty when there is no such session. Raises the store's errors."""
    record = await store.load(session_id)
    if record is None:
        return []
    for _ in range(MAX_DEPTH):
        parent = parent_of(record)
        above = None if parent is None else await store.load(parent)
        if above is None:
            break
        record = above
    found: list[tuple[SessionRecord, list[Approval]]] = []
    level = [record]
    for depth in range(MAX_DEPTH + 1):
        below: list[SessionRecord] = []
        for session in level:
            if len(found) >= MAX_SESSIONS:
                return found
            found.append(
                (
                    session,
                    await store.approvals.find(session_id=session.session_id, limit=_APPROVALS),
                )
            )
            if depth < MAX_DEPTH:
                below += await _children(store, session)
        level = below
    return found


async def load_tree_masks(
    store: Store, session_id: str, redactor: Redactor | None = None
) -> TreeMasks:
    """The masks of ``session_id``'s agent tree, for ``show_session(..., tree=...)``."""
    return tree_masks(await tree_sessions(store, session_id), redactor)


async def _children(store: Store, record: SessionRecord) -> list[SessionRecord]:
    from tether.agents.addresses import SEPARATOR, child_session_id
    from tether.durable.session_list import SEARCH_MAX
    from tether.session import fold

    try:
        messages = fold(record).messages
    except (KeyError, ValueError, TypeError):
        return []
    sid = record.session_id
    candidates = [
        child_session_id(sid, block.name, position, block.id)
        for position, message in enumerate(messages)
        for block in message.content
        if block.type == "tool_call"
    ]
    if not candidates:
        return []
    prefix = sid + SEPARATOR
    readable = {c for c in candidates if c.startswith(prefix)}
    existing: set[str] = set()
    # a few candidates: one lookup each beats an id search over every session's row
    if len(readable) > _DIRECT and len(prefix) <= SEARCH_MAX:
        offset = 0
        while True:
            page = await store.session_page(search=prefix, offset=offset, limit=_PAGE)
            existing.update(s.session_id for s in page.sessions if s.session_id in readable)
            offset += len(page.sessions)
            if not page.sessions or offset >= page.total:
                break
        hashed = [c for c in candidates if c not in readable]
    else:
        hashed = candidates
    lookups = set(hashed[:MAX_SESSIONS])  # one load each: bounded like the tree
    out: list[SessionRecord] = []
    for candidate in candidates:
        if candidate in existing or candidate in lookups:
            child = await store.load(candidate)
            if child is not None and parent_of(child) == sid:
                out.append(child)
    return out
