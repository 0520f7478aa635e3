"""Journal entries and their canonical JSON encoding (JSON only, never pickle)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from tether.durable.errors import CorruptEntry, NotSerializable

JournalKind = Literal[
    "message",
    "tool_intent",
    "tool_result",
    "interrupt_raised",
    "interrupt_answered",
    "usage",
    "status",
    "state",
    "snapshot",
    "audit",
    "compaction",
    "system_prompt",
]
JOURNAL_KINDS: Final[frozenset[str]] = frozenset(get_args(JournalKind))
ENTRY_SCHEMA: Final = 1
"""Entry format version written by this code."""

_MAX_DEPTH: Final = 256


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal row; ``seq`` is 1-based and dense per session."""

    seq: int
    kind: JournalKind
    data: dict[str, Any]
    at: float
    schema: int = 1


def encode_json(value: Any, *, what: str, root: str = "$") -> str:
    """Encode ``value`` as canonical compact JSON or raise :class:`NotSerializable`.

    Accepts dicts with str keys, lists and tuples (read back as lists), str, int,
    finite float, bool and None. The error names the JSON path of the first bad
    value (``root`` is the path of ``value`` itself) and ``what`` was written.
    """
    try:  # fast path: the C encoder, plus a walk that builds no path strings
        text = json.dumps(
            value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
        plain = _plain(value, 0)
    except (TypeError, ValueError, RecursionError):
        plain = False
    if not plain:  # find the first bad value and its path for the error
        problem = _find_problem(value, root, 0, set())
        if problem is not None:
            path, reason = problem
            raise NotSerializable(f"cannot write {what}: {path}: {reason}", path=path, what=what)
        text = json.dumps(
            value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        path = _find_surrogate(value, root) or root
        raise NotSerializable(
            f"cannot write {what}: {path}: string contains a lone surrogate (not valid UTF-8)",
            path=path,
            what=what,
        ) from None
    return text


def decode_entry(
    session_id: str, seq: int, kind: str, data: str | bytes, at: float, schema: int
) -> Entry:
    """Build an :class:`Entry` from stored columns or raise :class:`CorruptEntry`."""
    if kind not in JOURNAL_KINDS:
        raise CorruptEntry(session_id, seq, f"unknown entry kind {kind!r}")
    if schema > ENTRY_SCHEMA:
        raise CorruptEntry(
            session_id, seq, f"entry format {schema} is newer than {ENTRY_SCHEMA}; upgrade tether"
        )
    try:
        value = json.loads(data)
    except (ValueError, TypeError) as exc:
        raise CorruptEntry(session_id, seq, f"data is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CorruptEntry(session_id, seq, f"data is a JSON {type(value).__name__}, not an object")
    return Entry(seq=seq, kind=kind, data=value, at=float(at), schema=schema)  # type: ignore[arg-type]


def decode_object(text: str | bytes, *, what: str) -> dict[str, Any]:
    """Decode a stored JSON object (session metadata); raises StoreError subclasses."""
    from tether.durable.errors import StoreError

    try:
        value = json.loads(text)
    except (ValueError, TypeError) as exc:
        raise StoreError(f"{what} is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise StoreError(f"{what} is not a JSON object")
    return value


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


_CONTAINERS = (dict, list, tuple)


def _plain(value: Any, depth: int) -> bool:
    """True when every dict key is exactly ``str`` and nesting stays within the limit."""
    kind = type(value)
    if kind is dict:
        if depth >= _MAX_DEPTH:
            return False
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) in _CONTAINERS and not _plain(item, depth + 1):
                return False
    elif kind is list or kind is tuple:
        if depth >= _MAX_DEPTH:
            return False
        for item in value:
            if type(item) in _CONTAINERS and not _plain(item, depth + 1):
                return False
    return True


def _find_problem(value: Any, path: str, depth: int, active: set[int]) -> tuple[str, str] | None:
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, f"{value!r} is not valid JSON")
    if isinstance(value, (dict, list, tuple)):
        if depth >= _MAX_DEPTH:
            return path, f"nested deeper than {_MAX_DEPTH} levels"
        if id(value) in active:
            return path, "circular reference"
        active.add(id(value))
        try:
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        return path, f"key {key!r} is a {type(key).__name__}, JSON keys must be str"
                    found = _find_problem(item, _child(path, key), depth + 1, active)
                    if found is not None:
                        return found
            else:
                for index, item in enumerate(value):
                    found = _find_problem(item, _child(path, index), depth + 1, active)
                    if found is not None:
                        return found
        finally:
            active.discard(id(value))
        return None
    return path, f"{type(value).__name__} is not JSON-serializable"


def _find_surrogate(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_surrogate(key, path) or _find_surrogate(item, _child(path, key))
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _find_surrogate(item, _child(path, index))
            if found is not None:
                return found
    return None
