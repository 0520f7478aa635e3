"""Memory entries of :class:`~tether.durable.MemoryStore` (in-process, shared with its
siblings). Every method runs without awaiting in between, so each is atomic on one loop."""

from __future__ import annotations

import time
from dataclasses import replace

from tether.durable.memory_entries import (
    LIST_MAX,
    MemoryCaps,
    MemoryEntry,
    Usage,
    Written,
    check_scope,
    check_text,
    fits,
    new_entry_id,
)

Scopes = dict[str, dict[str, MemoryEntry]]
"""scope -> entry id -> entry, each scope's entries in insertion order."""


class MemoryMemoryEntries:
    def __init__(self, scopes: Scopes) -> None:
        self._scopes = scopes

    async def entries(self, scope: str, *, limit: int = LIST_MAX) -> list[MemoryEntry]:
        check_scope(scope)
        return list(self._scopes.get(scope, {}).values())[: min(limit, LIST_MAX)]

    async def get(self, scope: str, entry_id: str) -> MemoryEntry | None:
        return self._scopes.get(scope, {}).get(entry_id)

    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        held = self._scopes.get(scope, {})
        usage = _usage(held)
        if not fits(usage, caps, entries=1, chars=len(text)):
            return Written(None, usage)
        entry_id = new_entry_id()
        while entry_id in held:
            entry_id = new_entry_id()
        now = time.time()
        entry = MemoryEntry(scope, entry_id, text, now, now)
        self._scopes.setdefault(scope, {})[entry_id] = entry
        return Written(entry, Usage(usage.entries + 1, usage.chars + len(text)))

    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written:
        check_scope(scope)
        check_text(text, caps)
        held = self._scopes.get(scope, {})
        usage = _usage(held)
        old = held.get(entry_id)
        if old is None:
            return Written(None, usage, missing=True)
        grown = len(text) - len(old.text)
        if not fits(usage, caps, entries=0, chars=grown):
            return Written(None, usage)
        entry = replace(old, text=text, updated_at=time.time())
        held[entry_id] = entry
        return Written(entry, Usage(usage.entries, usage.chars + grown))

    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        held = self._scopes.get(scope)
        if held is None or entry_id not in held:
            return None
        old = held.pop(entry_id)
        if not held:
            del self._scopes[scope]
        return old

    async def scopes(self, *, limit: int = LIST_MAX) -> list[tuple[str, Usage]]:
        names = sorted(self._scopes)[: min(limit, LIST_MAX)]
        return [(name, _usage(self._scopes[name])) for name in names]


def _usage(held: dict[str, MemoryEntry]) -> Usage:
    return Usage(len(held), sum(len(e.text) for e in held.values()))
