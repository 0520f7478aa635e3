"""The page's timeline (Chromium via Playwright): what a Transform and an edit ran, and the
counted notes of what it could not show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import live_server
from ops_agents import SECRET, ran_with_sessions

from tether.durable import SQLiteStore
from tether.ops.server import create_app

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)


async def test_the_timeline_step_says_what_ran_and_who_changed_it(tmp_path: Path) -> None:
    db = tmp_path / "ran.db"
    await ran_with_sessions(db)
    store = SQLiteStore(db)
    token = (await store.approvers.add("vera", ["viewer"])).token
    await store.close()
    app = create_app(SQLiteStore(db), close_store=True)
    with live_server(app) as url:
        async with server_page(url, width=1400, height=1000) as page:
            await page.goto(url + "/#timeline=pin-1")
            await page.fill("#token", token)
            await page.click("#signin")
            for sid, args, label in (
                (
                    "pin-1",
                    {"amount": 500, "api_token": "***", "to": "escrow"},
                    "Transform by PinRecipient",
                ),
                ("edit-1", {"amount": 5, "api_token": "***", "to": "bob"}, "edited by alice"),
            ):
                if sid != "pin-1":
                    await page.evaluate(f"openTimeline({json.dumps(sid)})")
                await page.wait_for_selector(f"#tl-id:has-text('{sid}')")
                await page.wait_for_selector("#steps tr.kind-end")
                await page.click("#steps tr[data-kind='tool']")
                detail = await page.inner_text("#step-detail")
                ran = json.dumps(args, separators=(",", ":"))
                assert f"ran with\n{ran} ({label})" in detail.replace("\t", "\n"), detail
                assert SECRET not in await page.content()


async def test_the_timeline_says_what_it_could_not_show_counted_by_seq(tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    store = SQLiteStore(db)
    await store.create("odd")
    running = {"status": "running", "started_at": 1.0, "by": "w", "resume": False}
    entries: list[Any] = [("status", running)]
    entries += [("state", {"state": {"n": i}}) for i in range(12)]
    entries += [("usage", {"not": "usage"}), ("audit", {"future": 1}), ("audit", {"otel": {}})]
    await store.append("odd", 0, entries)
    token = (await store.approvers.add("vera", ["viewer"])).token
    await store.close()
    app = create_app(SQLiteStore(db), close_store=True)
    with live_server(app) as url:
        async with server_page(url) as page:
            await page.goto(url + "/#timeline=odd")
            await page.fill("#token", token)
            await page.click("#signin")
            await page.wait_for_selector("#tl-broken", state="visible")
            assert await page.inner_text("#tl-broken") == (
                "1 journal entry tether could not read (seq 14); 1 journal entry of a kind "
                "the timeline does not show: audit ['future'] (seq 15)"
            )
