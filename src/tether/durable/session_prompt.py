"""The first prompt of a session as the sessions list reads it: bounded.

The store reads at most :data:`READ_MAX` characters of the session's first ``message``
entry (:func:`prompt_text` decodes what a cut left), the session's assistant messages
that hold tool calls and its approval rows. Redacting it is governance's
(:func:`tether.governance.session_prompt.shown_prompt`, reached through the installed
:mod:`~tether.durable.rules`): one line of at most :data:`PROMPT_MAX` characters,
hidden exactly as ``sessions show`` hides it.
"""

from __future__ import annotations

import importlib
import json
import re
import warnings
from typing import Any, Final

READ_MAX: Final = 16_384
"""Characters of the first message entry a store reads (a long prompt is cut here)."""
PROMPT_MAX: Final = 120
"""Characters of the prompt shown (then an ellipsis)."""
_TEXT_HEAD: Final = '{"message":{"content":[{"text":"'
_PARTIAL_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")
"""A backslash at the end, or one starting a \\uXXXX escape the cut left short."""


def prompt_text(head: str, size: int) -> str | None:
    """The text of a first ``message`` entry from its first ``len(head)`` characters
    (``size`` is the entry's full length); None when it is not the user's text."""
    if size <= len(head):
        try:
            message = json.loads(head)["message"]
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(message, dict) or message.get("role") != "user":
            return None
        texts = [
            b["text"]
            for b in message.get("content") or ()
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return " ".join(texts) if texts else None
    # Cut: the canonical encoding (sorted keys) starts a text-first message with
    # _TEXT_HEAD; decode the string as far as it goes.
    if not head.startswith(_TEXT_HEAD):
        return None
    body = head[len(_TEXT_HEAD) :]
    end = _string_end(body)
    body = body[:end] if end is not None else _whole_escapes(body)
    try:
        text = json.loads(f'"{body}"')
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def _string_end(body: str) -> int | None:
    """Index of the closing quote of the JSON string ``body`` starts (None: cut first)."""
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i
        i += 1
    return None


def _whole_escapes(body: str) -> str:
    """``body`` without the escape the cut split at its end (``\\`` or ``\\u00``)."""
    match = _PARTIAL_ESCAPE.search(body)
    if match is None:
        return body
    start = match.start()
    slashes = len(body[: start + 1]) - len(body[: start + 1].rstrip("\\"))
    return body[:start] if slashes % 2 else body


def __getattr__(name: str) -> Any:
    if name != "shown_prompt":
        raise AttributeError(f"module 'tether.durable.session_prompt' has no attribute {name!r}")
    warnings.warn(
        "tether.durable.session_prompt.shown_prompt moved to "
        "tether.governance.session_prompt; this alias leaves in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return importlib.import_module("tether.governance.session_prompt").shown_prompt
