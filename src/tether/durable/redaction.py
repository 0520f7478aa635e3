"""Deprecated: the one redaction path moved to :mod:`tether.governance.redaction` (the
views) and :mod:`tether.governance.masks` (masking values). The old names stay
importable from here for one release, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_VIEWS = (
    "EditedCall",
    "ShownSession",
    "TreeMasks",
    "edits_to_store",
    "learn_calls",
    "redact_approval",
    "redactor_of",
    "show_messages",
    "show_session",
    "tree_masks",
)
_MASKS = (
    "MASK",
    "Masker",
    "model_keys",
    "provider_text",
    "redact_secrets",
    "redact_text",
    "shown_arguments",
)
_MOVED = {name: "tether.governance.redaction" for name in _VIEWS} | {
    name: "tether.governance.masks" for name in _MASKS
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.durable.redaction' has no attribute {name!r}")
    warnings.warn(
        f"tether.durable.redaction.{name} moved to {module}; this alias leaves in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(module), name)
