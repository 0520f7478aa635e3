"""What a session id may be: one rule, one function, a message naming the id and the rule."""

from __future__ import annotations

import pytest

from tether.errors import ConfigurationError, TetherError
from tether.session_ids import MAX_SESSION_ID, validate_session_id

VALID = [
    "s",
    "pay-1",
    "team/pay-1",
    "a/../b",
    "/leading/and/trailing/",
    "ü ?#%&+ 日本",
    "emoji 🙂",
    "x" * MAX_SESSION_ID,
    "...",
    ".hidden",
]


@pytest.mark.parametrize("session_id", VALID)
def test_valid_ids_are_returned_unchanged(session_id):
    assert validate_session_id(session_id) == session_id


@pytest.mark.parametrize(
    ("session_id", "said"),
    [
        ("", "the session id is empty"),
        ("x" * (MAX_SESSION_ID + 1), "is 257 characters long"),
        ("x" * 1_000_000, "is 1000000 characters long"),
        ("a\x00b", "a control character (U+0000 at position 1)"),
        ("line\nbreak", "a control character (U+000A at position 4)"),
        ("esc\x1b[2J", "a control character (U+001B at position 3)"),
        ("del\x7f", "a control character (U+007F at position 3)"),
        ("c1\x85", "a control character (U+0085 at position 2)"),
        ("half\ud800", "a lone surrogate (U+D800 at position 4)"),
        (".", "is not allowed"),
        ("..", "is not allowed"),
    ],
)
def test_invalid_ids_are_refused_naming_the_id_and_the_rule(session_id, said):
    with pytest.raises(ConfigurationError) as caught:
        validate_session_id(session_id)
    message = str(caught.value)
    assert isinstance(caught.value, TetherError)
    assert said in message
    assert "a session id is 1 to 256 characters" in message
    assert "control characters" in message
    assert len(message) < 600  # a 1 MB id is not repeated in the message
    assert message.isprintable()  # the id is escaped: no raw control character is printed


def test_a_long_id_is_shown_truncated_and_escaped():
    with pytest.raises(ConfigurationError) as caught:
        validate_session_id("evil\x1b[2A" + "y" * 500)
    message = str(caught.value)
    assert "'evil\\x1b[2A" in message
    assert "(+448 more characters)" in message


def test_a_non_string_is_refused():
    with pytest.raises(ConfigurationError, match=r"is not a string \(int\)"):
        validate_session_id(42)  # type: ignore[arg-type]
