"""Store error types: hierarchy, attributes and messages that say what to do."""

from __future__ import annotations

import tether.durable as durable
from tether.errors import TetherError


def test_every_store_error_is_a_tether_error() -> None:
    for name in (
        "StoreUnavailable",
        "SessionConflict",
        "SessionBusy",
        "LeaseLost",
        "SchemaTooNew",
        "CorruptEntry",
        "NotSerializable",
        "SessionNotFound",
    ):
        cls = getattr(durable, name)
        assert issubclass(cls, durable.StoreError)
        assert issubclass(cls, TetherError)
    assert issubclass(durable.NotSerializable, TypeError)
    assert issubclass(durable.SessionNotFound, KeyError)


def test_messages() -> None:
    busy = durable.SessionBusy("s", "host:42:abcd1234", 1_700_000_000.0)
    assert "host:42:abcd1234" in str(busy)
    assert "1700000000.000" in str(busy)
    conflict = durable.SessionConflict("s", 3, 5)
    assert "version 5, not 3" in str(conflict)
    assert "Reload" in str(conflict)
    assert str(durable.SessionNotFound("s")) == "no session 's' in this store; create it first"
    lost = durable.LeaseLost("s", "it expired")
    assert "it expired" in str(lost)
    assert "load the session again" in str(lost)
    corrupt = durable.CorruptEntry("s", 7, "bad")
    assert "entry 7 of session 's'" in str(corrupt)
    assert "until_seq=6" in str(corrupt)
