"""Deprecated: the agent tree's redaction reader moved to
:mod:`tether.governance.redaction_tree`; importable from here for one release."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_MOVED = frozenset({"MAX_DEPTH", "MAX_SESSIONS", "load_tree_masks", "parent_of", "tree_sessions"})


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module 'tether.durable.redaction_tree' has no attribute {name!r}")
    warnings.warn(
        f"tether.durable.redaction_tree.{name} moved to tether.governance.redaction_tree; "
        "this alias leaves in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module("tether.governance.redaction_tree"), name)
