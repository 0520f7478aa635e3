"""What a timeline is built from: a session's whole journal, approvals and audit records,
and those of its sub-agents' sessions.

A sub-agent call runs its child in the session ``child_session_id(parent, tool, position,
call id)`` of the same store (see :mod:`tether.agents.addresses`), created with the
metadata key ``tether_subagent`` naming its parent. The reader derives that id for every
tool call of the journal and keeps the sessions that exist and name this parent: one
id-search query finds the readable ids (``<parent>/<tool>#<position>.<call id>``), a
lookup each the hashed ones (``sub_...``, rare). Children nest to :data:`MAX_DEPTH`
levels, at most :data:`MAX_CHILDREN` sessions per timeline (the rest are left out).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from tether.agents.addresses import SEPARATOR, child_session_id
from tether.durable.claims import SUB_SESSION_KEY
from tether.durable.session_list import SEARCH_MAX

if TYPE_CHECKING:
    from tether.durable import Approval, Entry, SessionRecord, Store
    from tether.durable.audit import AuditRecord

AUDIT_ROWS: Final = 10_000
"""Audit records of one session read for its timeline."""
MAX_DEPTH: Final = 6
"""Levels of sub-agents nested under a session's timeline."""
MAX_CHILDREN: Final = 200
"""Sub-agent sessions read for one timeline (all levels together)."""
PAGE: Final = 500


@dataclass(frozen=True, slots=True)
class TimelineData:
    """What a timeline is built from: the session row with its *whole* journal (no
    snapshot), its approvals, its audit records and its sub-agents' (by child session
    id; ``spawned_by`` is a child's (tool name, message position, call id))."""

    record: SessionRecord
    approvals: list[Approval]
    audit: list[AuditRecord]
    children: dict[str, TimelineData] = field(default_factory=dict)
    spawned_by: tuple[str, int, str] | None = None
    tree: list[tuple[SessionRecord, list[Approval]]] = field(default_factory=list)
    """At the top: every session of the agent tree (its parents' too), for its masks."""


def spawned(session_id: str, entries: list[Entry]) -> dict[str, tuple[str, int, str]]:
    """Child session id -> (tool, position, call id) for every tool call in ``entries``
    (the ids a sub-agent call would use; most tools are not sub-agents)."""
    out: dict[str, tuple[str, int, str]] = {}
    position = 0
    for e in entries:
        if e.kind != "message":
            continue
        message: Any = e.data.get("message")
        if isinstance(message, dict) and message.get("role") == "assistant":
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_call":
                    tool, call_id = str(block.get("name")), str(block.get("id"))
                    out[child_session_id(session_id, tool, position, call_id)] = (
                        tool,
                        position,
                        call_id,
                    )
        position += 1
    return out


async def _existing(store: Store, session_id: str, candidates: list[str]) -> list[str]:
    """The ``candidates`` that are sessions in ``store`` (in their order)."""
    prefix = session_id + SEPARATOR
    readable = [c for c in candidates if c.startswith(prefix)]
    lookups = [c for c in candidates if not c.startswith(prefix)]
    found: set[str] = set()
    if readable and len(prefix) <= SEARCH_MAX:
        offset = 0
        while True:
            page = await store.session_page(search=prefix, offset=offset, limit=PAGE)
            found.update(s.session_id for s in page.sessions)
            offset += len(page.sessions)
            if not page.sessions or offset >= page.total:
                break
    else:
        lookups += readable
    for candidate in lookups:
        if await store.load(candidate) is not None:
            found.add(candidate)
    return [c for c in candidates if c in found]


async def read_timeline(store: Store, session_id: str) -> TimelineData | None:
    """Read what :func:`~tether.ops.timeline.timeline_of` needs (None: no such session).
    Raises the store's errors (``CorruptEntry`` for a row it cannot decode)."""
    from tether.governance.redaction_tree import tree_sessions

    budget = [MAX_CHILDREN]
    data = await _read(store, session_id, 0, budget)
    if data is None:
        return None
    # a child's timeline hides what its parents' and siblings' masks hid
    return replace(data, tree=await tree_sessions(store, session_id))


async def _read(
    store: Store, session_id: str, depth: int, budget: list[int]
) -> TimelineData | None:
    record = await store.load(session_id)
    if record is None:
        return None
    entries = record.entries  # the whole journal, unless a snapshot starts it
    if record.snapshot is not None:
        entries = await store.read_entries(session_id, 0)
    approvals = await store.approvals.find(session_id=session_id, limit=10_000)
    audit = await store.audit.records(session_id, 0, AUDIT_ROWS)
    whole = replace(record, snapshot=None, entries=entries)
    data = TimelineData(whole, approvals, audit)
    if depth >= MAX_DEPTH:
        return data
    calls = spawned(session_id, entries)
    for child_id in await _existing(store, session_id, list(calls)) if calls else []:
        if budget[0] <= 0:
            break
        child = await _read(store, child_id, depth + 1, budget)
        tree = None if child is None else child.record.metadata.get(SUB_SESSION_KEY)
        if child is None or not isinstance(tree, dict) or tree.get("parent_session") != session_id:
            continue  # a session that only looks like a child of this one
        budget[0] -= 1
        data.children[child_id] = replace(child, spawned_by=calls[child_id])
    return data
