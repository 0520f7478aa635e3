"""Untrusted text on a terminal: what a model, a tool or a store said, shown as inert text.

Every string the CLI prints that came from a store, a model or a tool goes through
:func:`safe` (a Rich ``Text``, so it is never parsed as markup) or, for JSON output,
:func:`json_line`. Control characters (C0 but newline and tab, DEL, C1, so ESC and
CSI sequences), bidi controls and other invisible characters are written visibly as
``\\xNN`` / ``\\uNNNN`` / ``\\UNNNNNNNN``: a reason cannot move the cursor, erase a
line, or reverse a path on screen. The web inbox does the same in ``static/inbox.js``
(``visible``); keep the two character sets alike.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from rich.text import Text

_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Letters and marks that render as nothing (Hangul fillers, Khmer inherent vowels,
# Mongolian variation selectors, the combining grapheme joiner).
_BLANK = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")
_KEEP_LAYOUT = frozenset("\n\t")


def _hidden(char: str, keep: frozenset[str]) -> bool:
    if char in keep:
        return False
    return char in _BLANK or unicodedata.category(char) in _INVISIBLE_CATEGORIES


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control, bidi or invisible character written as an escape.

    Newlines and tabs stay (they lay out multi-line content) unless ``one_line``.
    """
    if text.isascii() and text.isprintable():  # the common case, decided fast
        return text
    keep = frozenset() if one_line else _KEEP_LAYOUT
    return "".join(_escape(c) if _hidden(c, keep) else c for c in text)


def safe(value: Any, style: str = "", *, one_line: bool = False) -> Text:
    """Untrusted ``value`` (a string, else ``str(value)``) as Rich Text: never markup,
    every control, bidi or invisible character visible (see :func:`visible`)."""
    text = value if isinstance(value, str) else str(value)
    return Text(visible(text, one_line=one_line), style=style)


_NOT_PLAIN = re.compile(r"[^\x20-\x7e]")


def json_line(value: Any) -> str:
    """``value`` as one line of JSON that is safe on a terminal and parses to the same value.

    C0 characters are escaped by ``json.dumps``; the rest (DEL, C1, bidi and invisible
    characters) become ``\\uNNNN`` escapes. Other non-ASCII text stays readable UTF-8.
    """
    return json_text(json.dumps(value, ensure_ascii=False))


def json_text(text: str) -> str:
    """JSON ``text`` with DEL, C1, bidi and invisible characters escaped (same value:
    outside strings JSON is plain ASCII, inside them ``\\uNNNN`` means the character)."""
    return _NOT_PLAIN.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if not _hidden(char, _KEEP_LAYOUT):
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters past the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
