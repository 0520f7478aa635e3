"""Workers' claims: a sub-agent's child session is never claimed on its own.

A crashed child is recovered through its top session (whose factory knows the tree); a
worker that claimed the child would resume it with the top-level factory and hold its lease
while the top session's recovery needs it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tether.durable import Store
from tether.durable.claims import SUB_SESSION_KEY, TEMPORAL_KEY

STATUS = {"status": "running"}


async def _crashed(store: Store, session_id: str, metadata: dict[str, Any] | None) -> None:
    """A session whose run died: status running, its lease expired."""
    await store.create(session_id, metadata=metadata)
    lease = await store.acquire_lease(session_id, ttl=0.05)
    await store.append(session_id, 0, [("status", STATUS)], status="running", lease=lease)


async def test_a_crashed_child_session_is_never_claimed_but_its_top_session_is(
    backend: Any, store: Store
) -> None:
    child_id = "pay-1/researcher#1.call_1"
    await _crashed(store, "pay-1", None)
    await _crashed(store, child_id, {SUB_SESSION_KEY: {"parent": "pay-1", "path": ["researcher"]}})
    await _crashed(store, "odd", {"note": f'"{SUB_SESSION_KEY}": is only a value here'})
    await asyncio.sleep(0.1)  # both leases expire
    worker = backend.open()
    claimed = await worker.claim_ready(limit=10, ttl=30)
    assert sorted(lease.session_id for lease in claimed) == ["odd", "pay-1"]
    again = await worker.claim_ready(limit=10, ttl=30, exclude={"pay-1", "odd"})
    assert again == []


async def test_a_session_a_temporal_workflow_runs_is_never_claimed(
    backend: Any, store: Store
) -> None:
    """Its workflow resumes it when the answers arrive (as the Update): a worker that
    claimed it would run the session a second time, outside the workflow."""
    await _crashed(store, "wf-1", {TEMPORAL_KEY: {"workflow_id": "wf-1"}})
    await _crashed(store, "plain", None)
    await store.create("ready-wf", metadata={TEMPORAL_KEY: {"workflow_id": "ready-wf"}})
    await store.set_status("ready-wf", "ready")
    await asyncio.sleep(0.1)
    claimed = await backend.open().claim_ready(limit=10, ttl=30)
    assert [lease.session_id for lease in claimed] == ["plain"]
