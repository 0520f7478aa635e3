"""Long-term memory entries in the store: the protocol each backend implements, its types.

Entries are short texts keyed by a *scope* (``"user:42"``, ``"team-a"``) and an id
unique in it (8 hex digits, random, never reused in practice). The caps of a write are
checked in the write's own transaction, so two sessions writing the same scope at once
cannot go over them together. The tool that reads and writes them is
:func:`tether.tools.memory`; ``tether memory`` is the operator's view.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Final, Protocol

from tether.errors import InputError

SCOPE_MAX: Final = 200
"""Characters in a scope."""
LIST_MAX: Final = 1_000
"""Entries (or scopes) one read returns at most."""
ENTRY_COLS: Final = "scope, id, text, created_at, updated_at"


@dataclass(frozen=True, slots=True)
class MemoryCaps:
    """How much one scope holds: ``entries`` entries of at most ``entry_chars`` characters
    each, ``total_chars`` characters in all."""

    entries: int = 50
    entry_chars: int = 1_000
    total_chars: int = 5_000

    def __post_init__(self) -> None:
        for name in ("entries", "entry_chars", "total_chars"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise InputError(f"MemoryCaps.{name} is a positive int, got {value!r}")


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One stored entry."""

    scope: str
    id: str
    text: str
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class Usage:
    """What a scope holds: its entries and their characters."""

    entries: int = 0
    chars: int = 0


@dataclass(frozen=True, slots=True)
class Written:
    """The outcome of an ``add`` or ``replace``: the entry written (None: nothing was,
    because a cap would be passed or, for ``replace``, ``missing``: no entry has the id)
    and the scope's usage after it (as it is, when nothing was written)."""

    entry: MemoryEntry | None
    usage: Usage
    missing: bool = False


class MemoryEntries(Protocol):
    """The memory entries of a store (``store.memory_entries``)."""

    async def entries(self, scope: str, *, limit: int = LIST_MAX) -> list[MemoryEntry]:
        """The scope's entries, oldest first."""
        ...

    async def get(self, scope: str, entry_id: str) -> MemoryEntry | None: ...
    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written: ...
    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written: ...
    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        """Delete the entry; the one removed (None: there was none)."""
        ...

    async def scopes(self, *, limit: int = LIST_MAX) -> list[tuple[str, Usage]]:
        """Every scope holding entries, by name, with its usage."""
        ...


def check_scope(scope: object) -> str:
    """``scope`` when it is a usable scope, else InputError saying why."""
    if not isinstance(scope, str):
        raise InputError(f"a memory scope is a str, got {type(scope).__name__}")
    if not scope or len(scope) > SCOPE_MAX:
        raise InputError(f"a memory scope has 1 to {SCOPE_MAX} characters, got {len(scope)}")
    if not scope.isprintable():
        raise InputError(f"a memory scope has no control characters: {scope[:60]!r}")
    return scope


def check_text(text: object, caps: MemoryCaps) -> str:
    """``text`` when it is a str within ``caps.entry_chars``, else InputError."""
    if not isinstance(text, str) or not text:
        raise InputError("a memory entry is a non-empty str")
    if len(text) > caps.entry_chars:
        raise InputError(
            f"a memory entry holds at most {caps.entry_chars} characters, got {len(text)}"
        )
    return text


def fits(usage: Usage, caps: MemoryCaps, *, entries: int, chars: int) -> bool:
    """Whether ``usage`` changed by ``entries`` and ``chars`` stays within ``caps``."""
    return usage.entries + entries <= caps.entries and usage.chars + chars <= caps.total_chars


def new_entry_id() -> str:
    """A fresh entry id (8 hex digits)."""
    return secrets.token_hex(4)


def entry_from_row(row: tuple[object, ...]) -> MemoryEntry:
    """The entry of an :data:`ENTRY_COLS` row."""
    scope, entry_id, text, created, updated = row
    return MemoryEntry(str(scope), str(entry_id), str(text), float(created), float(updated))  # type: ignore[arg-type]
