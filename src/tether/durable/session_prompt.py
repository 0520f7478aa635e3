"""The first prompt of a session as the sessions list shows it: bounded, redacted.

The store reads at most :data:`READ_MAX` characters of the session's first ``message``
entry, the session's assistant messages that hold tool calls and its approval rows.
The prompt goes through the one redaction path (:class:`~tether.durable.redaction.Masker`
over the session's tool calls, with the masks its approval rows learned): a secret a
tool call's arguments hide is hidden in the prompt too, exactly as ``sessions show``
hides it. The result is one line of at most :data:`PROMPT_MAX` characters; it is still
untrusted text (a terminal or a page escapes it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final

from tether.durable.approval_types import Approval, args_sha256

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


def shown_prompt(
    text: str | None, calls: Iterable[dict[str, Any]], approvals: Iterable[Approval]
) -> str | None:
    """``text`` redacted like the session's views (``calls``: the ``message`` entry data
    of its assistant turns with tool calls), on one line, at most PROMPT_MAX characters.

    The scrub replaces hidden strings that occur in the text, so only the calls with an
    argument value found in ``text`` can change it: the others are skipped unparsed."""
    if not text:
        return None
    from tether.durable.redaction import Masker, _learned_masks
    from tether.messages import ToolCall

    every: list[ToolCall] = []
    for data in calls:
        blocks = data.get("message", {}).get("content") if isinstance(data, dict) else None
        for b in blocks if isinstance(blocks, list) else ():
            if isinstance(b, dict) and b.get("type") == "tool_call":
                args = b.get("arguments")
                if isinstance(args, dict) and isinstance(b.get("name"), str):
                    every.append(ToolCall(str(b.get("id")), b["name"], args))
    relevant = [c for c in every if _mentioned(c.arguments, text)]
    if not relevant:
        return _one_line(text)
    # the approval rows' learned masks (each row matched to its call by tool and hash)
    # apply to every call of that tool, so they count for the relevant calls' tools
    tools = {c.name for c in relevant}
    rows = [a for a in approvals if a.tool in tools]
    by_hash = {(c.name, args_sha256(dict(c.arguments))): c for c in every if c.name in tools}
    matched = {a.interrupt_id: by_hash.get((a.tool or "", a.args_sha256 or "")) for a in rows}
    masker = Masker(None, _learned_masks(rows, matched))
    for call in relevant:
        masker.call(call)
    return _one_line(str(masker.scrub(text)))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PROMPT_MAX else line[: PROMPT_MAX - 1] + "…"


def _mentioned(value: Any, text: str) -> bool:
    """Whether a string (or number) of ``value`` that a mask could hide occurs in ``text``
    (hidden strings shorter than 4 characters are never scrubbed)."""
    if isinstance(value, str):
        return len(value) >= 4 and value in text
    if isinstance(value, int | float) and not isinstance(value, bool):
        shown = str(value)
        return len(shown) >= 4 and shown in text
    if isinstance(value, dict):
        return any(_mentioned(v, text) for v in value.values())
    if isinstance(value, list):
        return any(_mentioned(v, text) for v in value)
    return False
