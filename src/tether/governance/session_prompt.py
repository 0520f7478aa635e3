"""The first prompt of a session as the sessions list shows it: redacted, one line.

The store reads the prompt's raw parts (:mod:`tether.durable.session_prompt`: bounded);
the prompt goes through the one redaction path (:class:`~tether.governance.masks.Masker`
over the session's tool calls, with the masks its approval rows learned): a secret a
tool call's arguments hide is hidden in the prompt too, exactly as ``sessions show``
hides it. The result is one line of at most :data:`PROMPT_MAX` characters; it is still
untrusted text (a terminal or a page escapes it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tether.durable.approval_types import Approval, args_sha256
from tether.durable.session_prompt import PROMPT_MAX
from tether.governance.masks import Masker, learned_masks

__all__ = ["PROMPT_MAX", "shown_prompt"]


def shown_prompt(
    text: str | None, calls: Iterable[dict[str, Any]], approvals: Iterable[Approval]
) -> str | None:
    """``text`` redacted like the session's views (``calls``: the ``message`` entry data
    of its assistant turns with tool calls), on one line, at most PROMPT_MAX characters.

    The scrub replaces hidden strings that occur in the text, so only the calls with an
    argument value found in ``text`` can change it: the others are skipped unparsed."""
    if not text:
        return None
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
    masker = Masker(None, learned_masks(rows, matched))
    for call in relevant:
        masker.learn(call.name, dict(call.arguments))
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
