"""Store calls run off the event loop: a store locked by another process answers 503 with
Retry-After for the write that waited, while reads go on."""

from __future__ import annotations

import asyncio
from typing import Any

from live_server import call, live_server, seed

from tether.durable import SQLiteStore
from tether.ops.server import create_app


async def test_a_store_held_by_another_process_answers_503_and_reads_go_on(tmp_path):
    import sqlite3

    path = tmp_path / "locked.db"
    store = SQLiteStore(path)
    tokens, approval_id = await seed(store)
    decision = {"decision": "approve"}
    with live_server(create_app(SQLiteStore(path, busy_timeout=2.0), close_store=True)) as url:
        route = f"{url}/api/approvals/{approval_id}/decision"
        assert (await asyncio.to_thread(call, "GET", f"{url}/api/sessions", tokens["viewer"]))[
            0
        ] == 200
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process takes the write lock and keeps it
        try:
            headers: dict[str, Any] = {}
            posting = asyncio.create_task(
                asyncio.to_thread(
                    call, "POST", route, tokens["alice"], decision, headers_out=headers
                )
            )
            await asyncio.sleep(0.3)
            for path_ in ("/api/approvals?limit=1", "/api/sessions/pay-1", "/api/events?wait=0"):
                status, _ = await asyncio.to_thread(call, "GET", url + path_, tokens["viewer"])
                assert status == 200, path_
            assert not posting.done()  # the reads did not wait for the blocked write
            status, body = await asyncio.wait_for(posting, 10)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert status == 503
        assert "locked by another connection" in body["error"]
        assert "retry" in body["error"]
        assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "1"
        assert (await store.approvals.get(approval_id)).status == "pending"  # nothing written
        status, body = await asyncio.to_thread(call, "POST", route, tokens["alice"], decision)
        assert status == 200
        assert body["decided_by"] == "alice"
    await store.close()
