"""A corrupted journal row: a clear error naming session and seq; everything else readable."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.durable import CorruptEntry, PostgresStore, SQLiteStore, Store

Corrupt = Callable[[str, int, str, str], None]  # session, seq, column, value


@pytest.fixture(params=["sqlite", "postgres"])
async def target(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Store, Corrupt]]:
    store: Store
    if request.param == "sqlite":
        path = tmp_path / "t.db"
        store = SQLiteStore(path)

        def corrupt(session_id: str, seq: int, column: str, value: str) -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(
                    f"UPDATE entries SET {column} = ? WHERE session_id = ? AND seq = ?",
                    (value, session_id, seq),
                )

    else:
        import psycopg

        dsn = request.getfixturevalue("pg_dsn")
        store = PostgresStore(dsn)

        def corrupt(session_id: str, seq: int, column: str, value: str) -> None:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(
                    f"UPDATE entries SET {column} = %s WHERE session_id = %s AND seq = %s",  # type: ignore[arg-type]
                    (value, session_id, seq),
                )

    yield store, corrupt
    await store.close()


async def _journal(store: Store, session_id: str, count: int) -> None:
    await store.create(session_id)
    await store.append(session_id, 0, [("message", {"i": i}) for i in range(1, count + 1)])


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("data", '{"role": "user", "cont', "not valid JSON"),
        ("data", "\x00\xff garbage", "not valid JSON"),
        ("data", "[1, 2]", "not an object"),
        ("kind", "mystery", "unknown entry kind 'mystery'"),
    ],
)
async def test_corrupt_row_is_reported_and_the_rest_is_readable(
    target: tuple[Store, Corrupt], column: str, value: str, reason: str
) -> None:
    store, corrupt = target
    await _journal(store, "bad", 5)
    await _journal(store, "good", 2)
    corrupt("bad", 3, column, value.replace("\x00", ""))
    with pytest.raises(CorruptEntry) as info:
        await store.load("bad")
    err = info.value
    assert (err.session_id, err.seq) == ("bad", 3)
    assert "entry 3 of session 'bad'" in str(err)
    assert reason in str(err)
    with pytest.raises(CorruptEntry):
        await store.read_entries("bad")
    before: list[Any] = await store.read_entries("bad", until_seq=2)
    assert [e.data for e in before] == [{"i": 1}, {"i": 2}]
    assert [e.seq for e in await store.read_entries("bad", 3)] == [4, 5]
    good = await store.load("good")
    assert good is not None
    assert len(good.entries) == 2
    assert {s.session_id for s in await store.list_sessions()} == {"bad", "good"}


async def test_snapshot_hides_corruption_before_it(target: tuple[Store, Corrupt]) -> None:
    store, corrupt = target
    await _journal(store, "s", 3)
    await store.append("s", 3, [("snapshot", {"state": "ok"}), ("message", {"i": 5})])
    corrupt("s", 2, "data", "{broken")
    record = await store.load("s")
    assert record is not None
    assert record.snapshot is not None
    assert [e.seq for e in record.entries] == [5]
