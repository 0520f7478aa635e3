"""Untrusted values (ids a client chose, errors) as the server log may show them."""

from __future__ import annotations

from typing import Final

from tether.governance.masks import redact_text
from tether.ops.terminal import visible

SHOWN: Final = 300


def logged(value: object) -> str:
    """``value`` redacted, on one line, every control or bidi character escaped, bounded."""
    text = repr(value) if isinstance(value, BaseException) else str(value)
    return visible(redact_text(text), one_line=True)[:SHOWN]
