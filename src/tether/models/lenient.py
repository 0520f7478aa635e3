"""Opt-in parser for tool calls that local models write into their text.

Recognizes ``<tool_call>{...}</tool_call>`` blocks, fenced JSON (```json ... ```)
and a bare JSON object (or list of objects) that is the whole reply, each shaped
``{"name": ..., "arguments" | "parameters" | "args" | "input": {...}}``. Only
names of tools offered in the request count, so ordinary JSON answers stay text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```(?:json|tool_call)?\s*(.*?)```", re.S)
_ARG_KEYS = ("arguments", "parameters", "args", "input")


def extract_tool_calls(
    text: str, tool_names: Collection[str]
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """Split ``text`` into (remaining text, [(tool name, arguments), ...])."""
    for pattern in (_TAGGED, _FENCED):
        calls: list[tuple[str, dict[str, Any]]] = []
        spans: list[tuple[int, int]] = []
        for match in pattern.finditer(text):
            found = _calls_in(match.group(1), tool_names)
            if found:
                calls.extend(found)
                spans.append(match.span())
        if calls:
            remaining = text
            for start, end in reversed(spans):
                remaining = remaining[:start] + remaining[end:]
            return remaining.strip(), calls
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        found = _calls_in(stripped, tool_names)
        if found:
            return "", found
    return text, []


def _calls_in(raw: str, tool_names: Collection[str]) -> list[tuple[str, dict[str, Any]]]:
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    calls: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if not isinstance(item, dict):
            return []
        function = item.get("function")
        call: dict[str, Any] = function if isinstance(function, dict) else item
        name = call.get("name")
        if not isinstance(name, str) or (tool_names and name not in tool_names):
            return []
        args: Any = next((call[k] for k in _ARG_KEYS if k in call), {})
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return []
        if not isinstance(args, dict):
            return []
        calls.append((name, args))
    return calls
