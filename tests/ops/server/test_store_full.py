"""A full disk is a 503 with Retry-After (nothing was lost, a retry may succeed), not a 500.

The disk is really full for SQLite: the store's write connection has ``max_page_count``
at the file's size, so SQLite answers SQLITE_FULL as on a full disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from live_server import call, live_server, seed

from tether.durable import SQLiteStore, StoreFull
from tether.ops.server import create_app


class FullDisk(SQLiteStore):
    """An SQLite store whose file may not grow, filled up to the last bytes of its pages:
    every write needing a new page answers SQLITE_FULL, as on a full disk."""

    def _open(self, **kwargs: Any) -> sqlite3.Connection:
        conn = super()._open(**kwargs)
        if self.read_only:
            return conn
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        conn.execute("CREATE TABLE IF NOT EXISTS filler (b BLOB)")
        for size in (2000, 200, 20, 1):
            try:
                while True:
                    conn.execute("INSERT INTO filler VALUES (zeroblob(?))", (size,))
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_FULL:
                    raise
        return conn


async def test_a_full_disk_is_a_store_full_error_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "full.db"
    store = SQLiteStore(path)
    await store.create("s-1")
    await store.close()
    full = FullDisk(path)
    try:
        with pytest.raises(StoreFull, match=r"disk is full.*free disk space, then retry"):
            await full.append("s-1", 0, [("message", {"text": "x" * 20_000})])
        record = await full.load("s-1")
        assert record is not None
        assert record.version == 0  # the refused write left nothing behind
    finally:
        await full.close()


async def test_a_decision_on_a_full_disk_is_503_with_retry_after_and_a_retry_succeeds(
    tmp_path: Path,
) -> None:
    path = tmp_path / "inbox.db"
    store = SQLiteStore(path)
    tokens, approval_id = await seed(store)
    await store.close()
    # a note of 6,000 bytes needs a new (overflow) page, which the full file cannot get
    route_body = {"decision": "deny", "note": "€" * 2000}
    headers: dict[str, str] = {}
    with live_server(create_app(FullDisk(path), close_store=True)) as url:
        route = f"{url}/api/approvals/{approval_id}/decision"
        status, body = await asyncio.to_thread(
            call, "POST", route, tokens["alice"], route_body, headers_out=headers
        )
        assert status == 503, body
        assert "disk is full" in body["error"]
        assert int(headers["retry-after"]) > 0
        # reads still work on a full disk
        status, shown = await asyncio.to_thread(
            call, "GET", f"{url}/api/approvals/{approval_id}", tokens["alice"]
        )
        assert (status, shown["status"]) == (200, "pending")
    store = SQLiteStore(path)
    try:
        assert (await store.approvals.get(approval_id)).status == "pending"
        assert not [r for r in await store.audit.records() if r.event == "approval.decided"]
        with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
            route = f"{url}/api/approvals/{approval_id}/decision"
            status, body = await asyncio.to_thread(call, "POST", route, tokens["alice"], route_body)
            assert (status, body["status"]) == (200, "denied")
        assert (await store.audit.verify()).ok
    finally:
        await store.close()
