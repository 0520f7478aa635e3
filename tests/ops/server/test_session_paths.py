"""Every valid session id is reachable over HTTP, ``/`` included, encoded as the page does."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

from live_server import ROLES, call, live_server
from ops_agents import transfer_agent

from tether.durable import SQLiteStore
from tether.ops.server import create_app

IDS = ["team/pay-1", "a/../b", "trailing/", "ü ?#%&+ 日本 🙂", "x" * 256]


def encode_uri_component(text: str) -> str:
    """What the page's ``encodeURIComponent`` sends."""
    return quote(text, safe="-_.!~*'()")


async def test_sessions_with_slashes_and_odd_characters_are_reachable(tmp_path):
    path = tmp_path / "ids.db"
    store = SQLiteStore(path)
    for session_id in IDS:
        result = await transfer_agent(store, session_id, []).invoke_async("pay bob")
        assert result.stop_reason == "interrupt"
    token = (await store.approvers.add("viewer", ROLES["viewer"])).token
    with live_server(create_app(SQLiteStore(path), close_store=True)) as url:
        for session_id in IDS:
            encoded = encode_uri_component(session_id)
            status, body = await asyncio.to_thread(
                call, "GET", f"{url}/api/sessions/{encoded}?tail=20", token
            )
            assert status == 200, (session_id, body)
            assert body["session_id"] == session_id
            assert [w["name"] for w in body["waiting_for"]] == ["confirm:AskFirst"]
            assert body["messages"], "the transcript is shown"
            status, listed = await asyncio.to_thread(
                call, "GET", f"{url}/api/approvals?session={encoded}", token
            )
            assert status == 200
            assert [a["session_id"] for a in listed["approvals"]] == [session_id]
        status, body = await asyncio.to_thread(call, "GET", f"{url}/api/sessions/team", token)
        assert status == 404
        assert body["error"] == "no session 'team' in this store"
    await store.close()
