"""Deprecated: the edit rule moved to :mod:`tether.governance.edits` (one release)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED = {"agent_at", "check_edit", "same", "tool_at"}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module 'tether.agents.edits' has no attribute {name!r}")
    warnings.warn(
        f"tether.agents.edits.{name} moved to tether.governance.edits; this alias leaves in "
        "the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("tether.governance.edits"), name)
