"""Every store refuses an invalid session id on create, before anything is written."""

from __future__ import annotations

import pytest

from tether.durable import Store
from tether.errors import ConfigurationError

INVALID = {
    "empty": "",
    "1 MB": "x" * 1_000_000,
    "257 characters": "x" * 257,
    "NUL": "a\x00b",
    "escape": "evil\x1b[2Jid",
    "C1": "c1\x9b",
    "lone surrogate": "half\udc80",
    "dot-dot": "..",
}
VALID = ["team/pay-1", "a/../b", "ü ?#%&+ 日本 🙂", "x" * 256]


@pytest.mark.parametrize("which", INVALID)
async def test_create_refuses_an_invalid_id_and_writes_nothing(store: Store, which: str) -> None:
    with pytest.raises(ConfigurationError, match="a session id is 1 to 256 characters"):
        await store.create(INVALID[which], metadata={"n": 1})
    assert await store.list_sessions() == []


async def test_every_valid_id_round_trips(store: Store) -> None:
    for session_id in VALID:
        created = await store.create(session_id)
        assert created.session_id == session_id
        await store.append(session_id, 0, [("message", {"role": "user", "content": "hi"})])
        loaded = await store.load(session_id)
        assert loaded is not None
        assert loaded.version == 1
    assert sorted(s.session_id for s in await store.list_sessions()) == sorted(VALID)
