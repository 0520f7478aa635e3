"""Request bodies: strict JSON (no NaN or Infinity, no duplicate keys, bounded nesting), or a
400 naming why."""

from __future__ import annotations

import json
import math
from typing import Any, Final, NoReturn

from starlette.exceptions import HTTPException

MAX_DEPTH: Final = 32
"""Objects and arrays nested deeper than this are refused (no decision needs more)."""


class _NotJson(ValueError):
    pass


def _constant(name: str) -> NoReturn:
    raise _NotJson(f"{name} is not a JSON number; send a finite number or a string")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {text[:40]} is too large for a finite float")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of duplicate keys: {"decision": "deny", "decision":
    # "approve"} would approve while a reader (or a log) sees the deny
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _NotJson(f"the key {key[:40]!r} appears more than once in one object")
        out[key] = value
    return out


def _too_deep(value: Any) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > MAX_DEPTH:
                    return True
                stack.append((child, depth + 1))
    return False


def parse_json(raw: bytes) -> Any:
    """The JSON value of ``raw``; HTTPException 400 saying what is wrong otherwise."""
    try:
        value = json.loads(
            raw, parse_constant=_constant, parse_float=_float, object_pairs_hook=_object
        )
    except _NotJson as exc:
        raise HTTPException(400, f"the body is not valid JSON: {exc}") from None
    except RecursionError:
        raise HTTPException(
            400, f"the body is nested too deeply; at most {MAX_DEPTH} levels are accepted"
        ) from None
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body must be a JSON object") from None
    if _too_deep(value):
        raise HTTPException(
            400, f"the body is nested too deeply; at most {MAX_DEPTH} levels are accepted"
        )
    return value
