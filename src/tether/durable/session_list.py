"""``store.session_page``: what every store's page query shares, for the sessions list.

The filtering, ordering, paging and the pending-approval count happen in the store's
query (one read transaction; each backend's own: ``sqlite/listing.py``,
``postgres/listing.py``, ``MemoryStore.session_page``); the usage counts are summed from
the ``usage`` entries (one per run) of the page's sessions only, so a page costs the same
with 20 or 20,000 sessions in the store. The first prompt is read from the page's
sessions only too (:mod:`tether.durable.session_prompt`: bounded, and redacted like
every view). Search is a case-sensitive substring of the session id (the same on every
store: SQLite's ``lower()`` folds ASCII only, PostgreSQL's a locale). Nothing here
imports a backend.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from tether.durable.approval_types import Approval
from tether.durable.rules import installed
from tether.durable.session_prompt import prompt_text
from tether.durable.store import SessionPage as SessionPage
from tether.durable.store import SessionStats as SessionStats
from tether.errors import InputError
from tether.messages import add_cost, read_cost

USAGE_KEYS: Final = ("input_tokens", "output_tokens", "model_calls", "tool_calls")
SEARCH_MAX: Final = 200


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


def where_clause(
    status: str | None, search: str | None, mark: str, find: str
) -> tuple[str, list[Any]]:
    """The ``WHERE`` of a page's query (``mark``: the driver's placeholder; ``find``: the
    SQL function giving a substring's position, ``instr`` or ``strpos``) and its arguments."""
    clauses, args = [], []
    if status is not None:
        clauses.append(f"status = {mark}")
        args.append(status)
    if search:
        clauses.append(f"{find}(id, {mark}) > 0")
        args.append(search)
    return ("WHERE " + " AND ".join(clauses) + " ") if clauses else "", args


PENDING: Final = (
    "(SELECT count(*) FROM approvals a WHERE a.session_id = s.id AND a.status = 'pending')"
)
"""SQL (both databases): the pending approvals of the session row ``s``."""
