"""The in-process backend: :class:`MemoryStore` and its tables."""

from tether.durable.memory.store import MemoryStore

__all__ = ["MemoryStore"]
