"""Turn whatever a tool returned into the text the model sees."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import enum
import json
import pathlib
import uuid
from typing import Any

from tether.messages import sanitize_text

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_JSON_NATIVE = frozenset({dict, list, tuple, int, float, bool})
_MAX_DEPTH = 100
_AS_ISO = (datetime.datetime, datetime.date, datetime.time)
_AS_STR = (uuid.UUID, decimal.Decimal, pathlib.PurePath)
_REPR = "converted with repr()"
_LIST = "converted to a list"
_CYCLE = "cut at a circular reference"


def format_tool_output(value: Any) -> str:
    """The model-facing text for a tool's return value. Never raises.

    Lone surrogates (invalid in UTF-8) become U+FFFD, as in model output and user
    input. ``str`` is returned otherwise as is and ``None`` becomes ``"null"``; other values become
    compact JSON (pydantic models via their own serializer, dataclasses as objects,
    datetimes/UUIDs/Decimals/paths/enums in their usual JSON form). Values with no
    JSON form (sets, arbitrary objects) are converted (sets to sorted lists, the
    rest with ``repr()``) and a ``[tether: ...]`` note saying so is appended.
    """
    return sanitize_text(_format(value))


def _format(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if kind in _JSON_NATIVE:
        try:
            return _ENCODER.encode(value)
        except (TypeError, ValueError, RecursionError):
            pass  # something inside needs converting
    try:
        return _format_converted(value)
    except Exception:
        return _safe_repr(value) + _note({type(value).__name__: _REPR})


def _format_converted(value: Any) -> str:
    if isinstance(value, str):
        return str.__str__(value)
    if _is_pydantic_model(value):
        try:
            return str(value.model_dump_json())
        except Exception:
            pass  # a field with no JSON form: convert it below
    notes: dict[str, str] = {}
    converted = _convert(value, notes, 0, set())
    text = converted if isinstance(converted, str) else _ENCODER.encode(converted)
    return text + _note(notes)


def _convert(value: Any, notes: dict[str, str], depth: int, path: set[int]) -> Any:
    """A JSON-ready copy of ``value``; records each lossy conversion in ``notes``."""
    if value is None or isinstance(value, str | int | float):
        return value  # bool is an int; str/int subclasses (StrEnum, IntEnum) encode natively
    if depth > _MAX_DEPTH:
        notes[type(value).__name__] = _REPR
        return _safe_repr(value)
    if isinstance(value, dict | list | tuple | set | frozenset):
        if id(value) in path:
            notes[type(value).__name__] = _CYCLE
            return "<circular reference>"
        path.add(id(value))
        try:
            return _convert_container(value, notes, depth + 1, path)
        finally:
            path.discard(id(value))
    if _is_pydantic_model(value):
        try:
            return value.model_dump(mode="json")
        except Exception:
            return _convert(value.model_dump(), notes, depth + 1, path)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return _convert(fields, notes, depth + 1, path)
    if isinstance(value, _AS_ISO):
        return value.isoformat()
    if isinstance(value, _AS_STR):
        return str(value)
    if isinstance(value, enum.Enum):
        return _convert(value.value, notes, depth + 1, path)
    notes[type(value).__name__] = _REPR
    return _safe_repr(value)


def _convert_container(value: Any, notes: dict[str, str], depth: int, path: set[int]) -> Any:
    if isinstance(value, dict):
        return {
            _convert_key(key, notes): _convert(item, notes, depth, path)
            for key, item in value.items()
        }
    items = [_convert(item, notes, depth, path) for item in value]
    if isinstance(value, set | frozenset):
        notes[type(value).__name__] = _LIST
        with contextlib.suppress(TypeError):  # mixed types: keep iteration order
            items.sort()
    return items


def _convert_key(key: Any, notes: dict[str, str]) -> Any:
    if key is None or isinstance(key, str | int | float):
        return key
    notes[type(key).__name__] = _REPR
    return _safe_repr(key)


def _is_pydantic_model(value: Any) -> bool:
    # Duck-typed so that formatting never imports pydantic.
    return hasattr(type(value), "__pydantic_serializer__") and hasattr(value, "model_dump_json")


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<{type(value).__name__} object>"


def _note(notes: dict[str, str]) -> str:
    if not notes:
        return ""
    if len(notes) == 1:
        ((kind, how),) = notes.items()
        return (
            f"\n[tether: the tool returned a value of type {kind!r} that is not "
            f"JSON-serializable; it was {how}]"
        )
    parts = ", ".join(f"{kind!r} ({how})" for kind, how in notes.items())
    return f"\n[tether: the tool returned values that are not JSON-serializable: {parts}]"
