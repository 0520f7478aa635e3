"""Top-level deltas of the session state, so a growing state costs only what it grew by.

A delta is ``{"set": {key: value}, "extend": {key: suffix}, "del": [key]}``:
``extend`` appends to a string or list that only grew at its end.
"""

from __future__ import annotations

import json
from typing import Any


def state_delta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The delta that turns ``old`` into ``new`` (both plain JSON values)."""
    set_: dict[str, Any] = {}
    extend: dict[str, Any] = {}
    for key, value in new.items():
        if key not in old:
            set_[key] = value
            continue
        before = old[key]
        if before == value:
            continue
        if _grew(before, value):
            extend[key] = value[len(before) :]
        else:
            set_[key] = value
    delta: dict[str, Any] = {}
    if set_:
        delta["set"] = set_
    if extend:
        delta["extend"] = extend
    removed = [key for key in old if key not in new]
    if removed:
        delta["del"] = removed
    return delta


def apply_delta(state: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """``state`` with ``delta`` applied (a new dict; ``state`` is not changed)."""
    result = dict(state)
    result.update(delta.get("set", {}))
    for key, suffix in delta.get("extend", {}).items():
        result[key] = result[key] + suffix
    for key in delta.get("del", ()):
        result.pop(key, None)
    return result


def smaller(delta: dict[str, Any], full: dict[str, Any]) -> bool:
    """Whether writing ``delta`` is cheaper than writing ``full``."""
    return len(json.dumps(delta, default=repr)) < len(json.dumps(full, default=repr))


def _grew(before: Any, after: Any) -> bool:
    if type(before) is not type(after) or not isinstance(before, str | list):
        return False
    return len(after) > len(before) and after[: len(before)] == before
