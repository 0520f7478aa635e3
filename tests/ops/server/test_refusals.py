"""Refused decisions are audited, but an approver cannot grow the audit log without bound."""

from __future__ import annotations

import asyncio

from live_server import call, live_server, seed

from tether.durable import SQLiteStore
from tether.ops.server import create_app

REFUSALS = 200


async def test_refusals_make_one_record_per_approver_per_window_with_a_count(tmp_path):
    path = tmp_path / "refused.db"
    store = SQLiteStore(path)
    tokens, approval_id = await seed(store)
    route_body = {"decision": "approve"}
    with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
        route = f"{url}/api/approvals/{approval_id}/decision"

        def hammer() -> list[int]:
            return [call("POST", route, tokens["viewer"], route_body)[0] for _ in range(REFUSALS)]

        statuses = await asyncio.to_thread(hammer)
        assert set(statuses) == {403}
        # another approver who may not decide transfers gets a record of its own
        status, body = await asyncio.to_thread(call, "POST", route, tokens["deleter"], route_body)
        assert status == 403
        assert "deleter" in body["error"]
        while_running = [r for r in await store.audit.records() if r.event == "approval.refused"]
        assert len(while_running) == 2, "one record per approver, not one per refused request"
        assert [(r.data["approver"], r.data["repeated"]) for r in while_running] == [
            ("viewer", 0),
            ("deleter", 0),
        ]
        assert while_running[0].data["approval_id"] == approval_id
        assert while_running[0].session_id == "pay-1"
    # the server stopped: the refusals counted but not recorded get one closing record
    refused = [r for r in await store.audit.records() if r.event == "approval.refused"]
    assert [(r.data["approver"], r.data["repeated"]) for r in refused] == [
        ("viewer", 0),
        ("deleter", 0),
        ("viewer", REFUSALS - 2),
    ]
    # every refusal is accounted for: records plus their counts
    assert sum(1 + r.data["repeated"] for r in refused) == REFUSALS + 1
    assert (await store.audit.verify()).ok
    assert (await store.approvals.get(approval_id)).status == "pending"
    await store.close()
