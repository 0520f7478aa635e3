"""What a session id may be (docs/design.md, "Session ids").

A session id is 1 to 256 characters of valid Unicode text: no lone surrogates (so it
encodes as UTF-8), no control characters (C0 ``U+0000``-``U+001F``, DEL ``U+007F``, C1
``U+0080``-``U+009F``), and not ``.`` or ``..`` (which a browser cannot send as a URL path
segment). Anything else is allowed, ``/`` included: the API and the inbox page
percent-encode ids, so every valid id is reachable over HTTP.
"""

from __future__ import annotations

import re
from typing import Final

from tether.errors import ConfigurationError

MAX_SESSION_ID: Final = 256
"""Characters (code points) in a session id, at most."""
SESSION_ID_RULE: Final = (
    f"a session id is 1 to {MAX_SESSION_ID} characters of valid Unicode (no lone "
    "surrogates), without control characters (U+0000-U+001F, U+007F-U+009F), and not "
    "'.' or '..'"
)
_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SHOWN: Final = 60


def _shown(session_id: str) -> str:
    """The id for an error message: escaped, at most ``_SHOWN`` characters of it."""
    text = session_id[:_SHOWN].encode("unicode_escape", "backslashreplace").decode("ascii")
    more = len(session_id) - _SHOWN
    return f"'{text}'" + (f" (+{more} more characters)" if more > 0 else "")


def validate_session_id(session_id: str) -> str:
    """``session_id`` if it is a valid session id; ConfigurationError naming it and the rule."""
    if not isinstance(session_id, str):
        raise ConfigurationError(
            f"session id {session_id!r} is not a string ({type(session_id).__name__}); "
            f"{SESSION_ID_RULE}"
        )
    if not session_id:
        raise ConfigurationError(f"the session id is empty; {SESSION_ID_RULE}")
    if len(session_id) > MAX_SESSION_ID:
        raise ConfigurationError(
            f"session id {_shown(session_id)} is {len(session_id)} characters long; "
            f"{SESSION_ID_RULE}"
        )
    bad = _BAD_CHAR.search(session_id)
    if bad is not None:
        what = "a lone surrogate" if "\ud800" <= bad.group() <= "\udfff" else "a control character"
        raise ConfigurationError(
            f"session id {_shown(session_id)} contains {what} (U+{ord(bad.group()):04X} at "
            f"position {bad.start()}); {SESSION_ID_RULE}"
        )
    if session_id in (".", ".."):
        raise ConfigurationError(f"session id {session_id!r} is not allowed; {SESSION_ID_RULE}")
    return session_id
