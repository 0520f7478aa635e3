"""Long polls share one change cursor: the store is asked once per change, not per client."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from live_server import call, live_server, seed

from tether.durable import SessionStatus, SessionSummary, SQLiteStore
from tether.ops.server import create_app

WAITERS = 50


class CountingStore(SQLiteStore):
    """A real SQLite store that counts the session listings (half of the cursor query)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.listings = 0
        self._count_lock = threading.Lock()

    async def list_sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> list[SessionSummary]:
        with self._count_lock:
            self.listings += 1
        return await super().list_sessions(status=status, limit=limit)


async def test_the_cursor_is_computed_once_per_change_not_once_per_waiter(tmp_path):
    store = SQLiteStore(tmp_path / "poll.db")
    tokens, approval_id = await seed(store)
    served = CountingStore(tmp_path / "poll.db")
    viewer = tokens["viewer"]
    with (
        live_server(create_app(served, close_store=True)) as url,
        ThreadPoolExecutor(WAITERS + 2) as pool,
    ):
        status, first = await asyncio.to_thread(call, "GET", f"{url}/api/events", viewer)
        assert status == 200
        cursor = first["cursor"]
        poll = f"{url}/api/events?since={cursor}&wait=20"
        waiting = [
            asyncio.wrap_future(pool.submit(call, "GET", poll, viewer)) for _ in range(WAITERS)
        ]
        await asyncio.sleep(1.5)  # three poll intervals with every waiter waiting
        status, listed = await asyncio.wait_for(
            asyncio.to_thread(call, "GET", f"{url}/api/approvals?limit=1", viewer), 10
        )
        assert status == 200
        assert len(listed["approvals"]) == 1
        assert not any(w.done() for w in waiting)  # an unrelated request went through meanwhile
        assert served.listings <= 1, "nothing changed: the cursor needs no recomputing"
        before = served.listings
        await store.approvals.decide(approval_id, "deny", decided_by="cli-user")
        answers = await asyncio.wait_for(asyncio.gather(*waiting), 10)
        assert {status for status, _ in answers} == {200}
        cursors = {body["cursor"] for _, body in answers}
        assert len(cursors) == 1
        assert cursors != {cursor}
        assert all(body["changed"] for _, body in answers)
        # one change, one recomputation (two when the change lands between the marker read
        # and the query), however many clients wait
        assert 1 <= served.listings - before <= 2
    await store.close()


async def test_a_store_without_a_change_marker_is_polled_once_per_tick_for_all_waiters():
    from tether.control.interrupts import Interrupt
    from tether.durable import MemoryStore
    from tether.messages import ToolCall
    from tether.ops.server.changes import ChangeFeed
    from tether.ops.server.offload import StoreRunner

    class Counting(MemoryStore):
        listings = 0

        async def list_sessions(
            self, *, status: SessionStatus | None = None, limit: int = 100
        ) -> list[SessionSummary]:
            self.listings += 1
            return await super().list_sessions(status=status, limit=limit)

    async def here() -> bool:
        return False

    store = Counting()
    feed = ChangeFeed(StoreRunner(store), every=0.1)
    first = await feed.wait(None, 0, here)
    waiters = [asyncio.create_task(feed.wait(first, 5, here)) for _ in range(WAITERS)]
    await asyncio.sleep(0.55)
    assert not any(w.done() for w in waiters)
    assert store.listings <= 8  # about one per 0.1 s tick, not one per waiter and tick
    call = ToolCall("c1", "transfer", {"amount": 1})
    await store.approvals.request("s-1", Interrupt("i1", "ask", "?", "intervention", "x", call))
    answers = await asyncio.wait_for(asyncio.gather(*waiters), 2)
    assert len(set(answers)) == 1
    assert answers[0] != first
    await feed.close()
