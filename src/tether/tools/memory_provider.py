"""Where the ``memory`` tool keeps its entries: a :class:`MemoryProvider`.

The default, :class:`StoreMemory`, keeps them in the agent's own store
(``store.memory_entries``: the same database as its sessions and audit log). An external
memory service plugs in as an object with these four methods
(``memory(provider=...)``); the tool's governance (policies, hooks, Confirm, the audit
record, the secret check, the caps it passes) is the same whichever provider it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.durable.memory_entries import MemoryCaps, MemoryEntry, Written
    from tether.durable.store import Store


@runtime_checkable
class MemoryProvider(Protocol):
    """Long-term memory entries by scope. ``add`` and ``replace`` keep to ``caps`` and
    report the scope's usage (:class:`~tether.durable.memory_entries.Written`)."""

    async def entries(self, scope: str) -> list[MemoryEntry]:
        """The scope's entries, oldest first."""
        ...

    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written: ...
    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written: ...
    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        """Delete the entry; the one removed (None: there was none)."""
        ...


class StoreMemory:
    """The default provider: the entries of a store (``store.memory_entries``)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def entries(self, scope: str) -> list[MemoryEntry]:
        return await self.store.memory_entries.entries(scope)

    async def add(self, scope: str, text: str, caps: MemoryCaps) -> Written:
        return await self.store.memory_entries.add(scope, text, caps)

    async def replace(self, scope: str, entry_id: str, text: str, caps: MemoryCaps) -> Written:
        return await self.store.memory_entries.replace(scope, entry_id, text, caps)

    async def remove(self, scope: str, entry_id: str) -> MemoryEntry | None:
        return await self.store.memory_entries.remove(scope, entry_id)


def provider_for(provider: MemoryProvider | None, store: Store | None, tool: str) -> MemoryProvider:
    """``provider``, else the store's entries; ConfigurationError when there is neither."""
    if provider is not None:
        return provider
    if store is None:
        raise ConfigurationError(
            f"tool {tool!r}: memory() keeps its entries in the agent's store, and this agent "
            "has none: pass Agent(store=...) or memory(provider=...)"
        )
    return StoreMemory(store)
