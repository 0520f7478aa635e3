"""The Store contract: journal, CAS, snapshots, status, listing, serialization, delete.

Runs unchanged on MemoryStore, SQLiteStore and PostgresStore (see conftest.py).
Leases are in test_lease_contract.py, multi-process races in test_cross_process.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest

from tether.durable import (
    Entry,
    NotSerializable,
    SessionConflict,
    SessionNotFound,
    Store,
)

MSG: dict[str, Any] = {"role": "user", "content": "hello"}


async def test_create_then_load_round_trips(store: Store) -> None:
    created = await store.create("s-1", metadata={"agent": "demo", "n": 1})
    assert (created.session_id, created.version, created.status) == ("s-1", 0, "idle")
    assert (created.snapshot, created.entries, created.lease) == (None, [], None)
    assert created.metadata == {"agent": "demo", "n": 1}
    assert created.created_at <= created.updated_at
    loaded = await store.load("s-1")
    assert loaded == created


async def test_create_is_idempotent(store: Store) -> None:
    await store.create("s-1", metadata={"first": True})
    await store.append("s-1", 0, [("message", MSG)])
    again = await store.create("s-1", metadata={"second": True})
    assert again.metadata == {"first": True}
    assert again.version == 1


async def test_load_of_missing_session_is_none(store: Store) -> None:
    assert await store.load("nope") is None


async def test_append_assigns_dense_seqs(store: Store) -> None:
    await store.create("s")
    first = await store.append("s", 0, [("message", MSG), ("usage", {"input": 3})])
    second = await store.append("s", 2, [("tool_intent", {"id": "c1"})])
    assert [e.seq for e in first + second] == [1, 2, 3]
    assert [e.kind for e in first + second] == ["message", "usage", "tool_intent"]
    assert all(e.schema == 1 and e.at > 0 for e in first + second)
    record = await store.load("s")
    assert record is not None
    assert record.version == 3
    assert record.entries == first + second
    assert record.updated_at >= record.created_at


async def test_stale_expected_version_conflicts_and_writes_nothing(store: Store) -> None:
    await store.create("s")
    await store.append("s", 0, [("message", MSG)])
    with pytest.raises(SessionConflict) as info:
        await store.append("s", 0, [("message", {"stale": True})], status="failed")
    err = info.value
    assert (err.session_id, err.expected_version, err.actual_version) == ("s", 0, 1)
    assert "another writer" in str(err)
    assert "resume" in str(err)
    record = await store.load("s")
    assert record is not None
    assert (record.version, record.status, len(record.entries)) == (1, "idle", 1)
    with pytest.raises(SessionConflict):
        await store.append("s", 5, [("message", MSG)])


async def test_append_to_missing_session_raises_not_found(store: Store) -> None:
    with pytest.raises(SessionNotFound, match="nope"):
        await store.append("nope", 0, [("message", MSG)])
    assert await store.load("nope") is None


async def test_empty_append_is_a_cas_status_change(store: Store) -> None:
    await store.create("s")
    assert await store.append("s", 0, [], status="running") == []
    with pytest.raises(SessionConflict):
        await store.append("s", 1, [], status="failed")
    record = await store.load("s")
    assert record is not None
    assert (record.version, record.status) == (0, "running")


async def test_unknown_kind_is_rejected_before_writing(store: Store) -> None:
    await store.create("s")
    with pytest.raises(ValueError, match="bogus"):
        await store.append("s", 0, [("message", MSG), ("bogus", {})])  # type: ignore[list-item]
    assert (await store.read_entries("s")) == []


async def test_snapshot_load_returns_snapshot_and_later_entries(store: Store) -> None:
    await store.create("s")
    await store.append("s", 0, [("message", {"i": 1}), ("message", {"i": 2})])
    await store.append("s", 2, [("snapshot", {"state": [1, 2]}), ("message", {"i": 3})])
    await store.append("s", 4, [("message", {"i": 4})])
    record = await store.load("s")
    assert record is not None
    assert record.snapshot is not None
    assert (record.snapshot.seq, record.snapshot.data) == (3, {"state": [1, 2]})
    assert [e.data for e in record.entries] == [{"i": 3}, {"i": 4}]
    assert record.version == 5
    await store.append("s", 5, [("snapshot", {"state": [1, 2, 3, 4]})])
    latest = await store.load("s")
    assert latest is not None
    assert latest.snapshot is not None
    assert (latest.snapshot.seq, latest.entries) == (6, [])
    assert [e.seq for e in await store.read_entries("s")] == [1, 2, 3, 4, 5, 6]


async def test_read_entries_ranges(store: Store) -> None:
    await store.create("s")
    await store.append("s", 0, [("message", {"i": i}) for i in range(1, 6)])
    assert [e.seq for e in await store.read_entries("s")] == [1, 2, 3, 4, 5]
    assert [e.seq for e in await store.read_entries("s", 3)] == [4, 5]
    assert [e.seq for e in await store.read_entries("s", 1, until_seq=3)] == [2, 3]
    assert await store.read_entries("s", 5) == []
    with pytest.raises(SessionNotFound):
        await store.read_entries("nope")


async def test_status_and_list_sessions(store: Store) -> None:
    for name in ("a", "b", "c"):
        await store.create(name, metadata={"name": name})
        await asyncio.sleep(0.002)
    await store.append("a", 0, [("status", {"to": "running"})], status="running")
    await asyncio.sleep(0.002)
    await store.set_status("b", "suspended")
    listed = await store.list_sessions()
    assert [s.session_id for s in listed] == ["b", "a", "c"]
    assert [s.status for s in listed] == ["suspended", "running", "idle"]
    assert listed[1].version == 1
    assert listed[1].metadata == {"name": "a"}
    assert [s.session_id for s in await store.list_sessions(status="running")] == ["a"]
    assert await store.list_sessions(status="completed") == []
    assert len(await store.list_sessions(limit=2)) == 2
    with pytest.raises(SessionNotFound):
        await store.set_status("nope", "failed")
    with pytest.raises(ValueError, match="unknown session status"):
        await store.set_status("a", "paused")  # type: ignore[arg-type]


async def test_not_serializable_names_path_and_writes_nothing(store: Store) -> None:
    await store.create("s-1")
    bad = {"args": {"when": dt.datetime(2024, 1, 1)}}
    with pytest.raises(NotSerializable) as info:
        await store.append("s-1", 0, [("message", MSG), ("tool_result", bad)])
    message = str(info.value)
    assert "$.data.args.when: datetime is not JSON-serializable" in message
    assert "journal entry 'tool_result' of session s-1" in message
    assert isinstance(info.value, TypeError)
    record = await store.load("s-1")
    assert record is not None
    assert (record.version, record.entries) == (0, [])


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"x": {1, 2}}, "$.data.x"),
        ({"x": [b"raw"]}, "$.data.x[0]"),
        ({"x": float("nan")}, "$.data.x"),
        ({"x": {1: "a"}}, "$.data.x"),
        ({"x": object()}, "$.data.x"),
    ],
)
async def test_non_json_values_are_rejected(store: Store, value: Any, path: str) -> None:
    await store.create("s")
    with pytest.raises(NotSerializable) as info:
        await store.append("s", 0, [("message", value)])
    assert info.value.path == path
    assert await store.read_entries("s") == []


async def test_bad_metadata_is_rejected(store: Store) -> None:
    with pytest.raises(NotSerializable, match=r"\$\.metadata\.tags"):
        await store.create("s", metadata={"tags": {"a"}})
    assert await store.load("s") is None


async def test_unicode_and_json_values_round_trip(store: Store) -> None:
    sid = "séance-🧵-会话"
    data = {
        "text": 'naïve 😀 中文 עברית e\u0301 \u0000 \t\n"quoted" \\',
        "ключ": ["ü", {"nested": "ß"}],
        "numbers": [0, -1, 2**70, 0.1, 1e300, -2.5, True, False, None],
        "empty": {"list": [], "dict": {}, "str": ""},
    }
    await store.create(sid, metadata={"title": "📝 notes"})
    [written] = await store.append(sid, 0, [("message", data)])
    assert written.data == data
    record = await store.load(sid)
    assert record is not None
    assert record.entries[0].data == data
    assert record.metadata == {"title": "📝 notes"}
    assert [s.session_id for s in await store.list_sessions()] == [sid]


async def test_entries_do_not_alias_caller_data(store: Store) -> None:
    await store.create("s")
    data: dict[str, Any] = {"items": [1]}
    await store.append("s", 0, [("state", data)])
    data["items"].append(2)
    first = await store.read_entries("s")
    first[0].data["items"].append(3)
    assert (await store.read_entries("s"))[0].data == {"items": [1]}


async def test_durable_append_is_readable(store: Store) -> None:
    await store.create("s")
    entries = await store.append(
        "s", 0, [("tool_intent", {"id": "c1"})], durable=True, status="running"
    )
    assert entries == await store.read_entries("s")
    await store.append("s", 1, [("tool_result", {"id": "c1"})])
    assert [e.kind for e in await store.read_entries("s")] == ["tool_intent", "tool_result"]


async def test_delete(store: Store) -> None:
    await store.create("s")
    await store.create("keep")
    await store.append("s", 0, [("message", MSG)])
    await store.delete("s")
    assert await store.load("s") is None
    assert [s.session_id for s in await store.list_sessions()] == ["keep"]
    await store.delete("s")  # deleting again is a no-op
    recreated = await store.create("s")
    assert (recreated.version, recreated.entries) == (0, [])


async def test_second_store_object_sees_writes(backend: Any, store: Store) -> None:
    await store.create("s")
    await store.append("s", 0, [("message", MSG)])
    other = backend.open()
    record = await other.load("s")
    assert record is not None
    assert record.entries == [Entry(1, "message", MSG, record.entries[0].at)]
    await other.append("s", 1, [("message", MSG)])
    with pytest.raises(SessionConflict):
        await store.append("s", 1, [("message", MSG)])
