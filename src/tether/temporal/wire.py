"""tether's values as plain JSON, for what crosses between a workflow and its activities.

Temporal stores every activity's input and result in the workflow's history, so what
crosses must be plain data; it is also read back by a worker that may not trust the
server, so decoding builds only the types :func:`types` names (never an import by
name, never pickle). A dataclass is ``{"$t": name, "f": {field: value}}``; a dict
``{"$m": {...}}`` (so a user's ``"$t"`` key is only ever a key); a tuple ``{"$tuple":
[...]}``; a Decimal ``{"$dec": "1.5"}``; everything else is JSON as it is.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any, Final

from tether.errors import TetherError


class WireError(TetherError):
    """A value that cannot cross to or from an activity (a type outside :func:`types`)."""


def error_data(exc: BaseException) -> dict[str, str]:
    """A tether error as data: its class name and message (what an activity returns)."""
    return {"type": type(exc).__name__, "message": str(exc)}


def raise_error(data: dict[str, Any]) -> None:
    """Raise the tether error :func:`error_data` described: the same class when it is one
    of tether's errors (its message only: the attributes its constructor sets are not
    carried), else a :class:`WireError` with the message."""
    from tether import errors
    from tether.durable import approval_types
    from tether.durable import errors as store_errors

    name, message = str(data.get("type", "")), str(data.get("message", ""))
    for module in (errors, store_errors, approval_types):
        cls = getattr(module, name, None)
        if isinstance(cls, type) and issubclass(cls, TetherError):
            exc = cls.__new__(cls)
            Exception.__init__(exc, message)
            raise exc
    raise WireError(f"{name}: {message}")


def _types() -> dict[str, type]:
    from tether.durable.approval_types import Approval
    from tether.durable.audit import AuditEvent, AuditRecord
    from tether.durable.entries import Entry
    from tether.durable.memory_entries import MemoryCaps, MemoryEntry, Written
    from tether.durable.memory_entries import Usage as MemoryUsage
    from tether.durable.session_search import TextHit, TextQuery
    from tether.durable.store import (
        Lease,
        SessionPage,
        SessionRecord,
        SessionStats,
        SessionSummary,
        Sidecar,
    )
    from tether.events import (
        ModelFallback,
        ModelRetry,
        ModelStop,
        ReasoningDelta,
        TextDelta,
        ToolCallDelta,
    )
    from tether.messages import (
        Image,
        Message,
        ReasoningBlock,
        TextBlock,
        ToolCall,
        ToolResult,
        Usage,
    )
    from tether.models.base import ModelRequest

    found = (
        Approval, AuditEvent, AuditRecord, Entry, Lease, SessionPage, SessionRecord,
        SessionStats, SessionSummary, Sidecar, Image, Message, ReasoningBlock, TextBlock,
        ToolCall, ToolResult, Usage, ModelFallback, ModelRetry, ModelStop, ReasoningDelta,
        TextDelta, ToolCallDelta, ModelRequest, MemoryCaps, MemoryEntry, MemoryUsage, Written,
        TextHit, TextQuery,
    )  # fmt: skip
    return {key(cls): cls for cls in found}


def key(cls: type) -> str:
    """A type's name on the wire: its module and name (two types may share a name)."""
    return f"{cls.__module__}:{cls.__qualname__}"


_TYPES: dict[str, type] = {}
MAX_DEPTH: Final = 200


def types() -> dict[str, type]:
    """The dataclasses that may cross (built on first use: the imports are not free)."""
    if not _TYPES:
        _TYPES.update(_types())
    return _TYPES


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data (raises :class:`WireError` for another type)."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels cannot cross")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {"$m": {str(k): encode(v, depth + 1) for k, v in value.items()}}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, depth + 1) for v in value]}
    if isinstance(value, Decimal):
        return {"$dec": str(value)}
    name = key(type(value))
    if dataclasses.is_dataclass(value) and types().get(name) is type(value):
        fields = {
            f.name: encode(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
        }
        return {"$t": name, "f": fields}
    raise WireError(f"a {name} cannot cross between a workflow and its activities")


def decode(data: Any, depth: int = 0) -> Any:
    """The value :func:`encode` made ``data`` of."""
    if depth > MAX_DEPTH:
        raise WireError(f"data nested deeper than {MAX_DEPTH} levels")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if isinstance(data, dict):
        if "$m" in data:
            return {k: decode(v, depth + 1) for k, v in data["$m"].items()}
        if "$tuple" in data:
            return tuple(decode(v, depth + 1) for v in data["$tuple"])
        if "$dec" in data:
            return Decimal(data["$dec"])
        cls = types().get(str(data.get("$t")))
        if cls is None:
            raise WireError(f"unknown type {str(data.get('$t'))[:80]!r} in activity data")
        fields = {k: decode(v, depth + 1) for k, v in data.get("f", {}).items()}
        return cls(**fields)
    raise WireError(f"unexpected {type(data).__name__} in activity data")
