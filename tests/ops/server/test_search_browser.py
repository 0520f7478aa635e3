"""The Sessions tab's search in Chromium: the ids that match as before, and the messages
that hold the words as redacted, escaped snippets that open the session's timeline."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import live_server, seed
from ops_agents import SECRET, transfer_agent

from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.server import create_app

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)


async def test_the_search_box_lists_redacted_message_matches(tmp_path: Path) -> None:
    db = tmp_path / "page.db"
    store = SQLiteStore(db)
    tokens, _ = await seed(store)
    await transfer_agent(store, "walrus-1", []).invoke_async(f"pay the walrus fee with {SECRET}")
    await Agent(model=ScriptedModel(["ok"]), store=store, session_id="chat-9").invoke_async(
        "<img src=x onerror=alert(1)> walrus \u202eevil"
    )
    await store.close()
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        async with server_page(url, width=1280, height=900) as page:
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            await page.goto(url + "/")
            await page.fill("#token", tokens["viewer"])
            await page.click("#signin")
            await page.wait_for_selector("#tabs", state="visible")
            await page.click("#tab-sessions")
            assert await page.is_hidden("#s-matches")
            await page.fill("#s-search", "walrus")
            await page.wait_for_selector("#s-matches", state="visible")
            await page.wait_for_selector("#match-list li[data-session='chat-9']")
            # ids: as before (the id contains the text)
            assert await page.locator("#session-list tbody tr").count() == 1
            items = page.locator("#match-list li")
            texts = [await items.nth(i).inner_text() for i in range(await items.count())]
            assert any("pay the walrus fee with ***" in t for t in texts)
            [evil] = [t for t in texts if "chat-9" in t]
            assert "<img src=x onerror=alert(1)> walrus \\u202eevil" in evil  # text, escaped
            assert await page.locator("#match-list img").count() == 0
            assert SECRET not in await page.content()
            await page.fill("#s-search", SECRET)
            await page.wait_for_selector("#s-matches", state="hidden")
            await page.fill("#s-search", "walrus")
            await page.locator("#match-list li[data-session='chat-9'] button.link").click()
            await page.wait_for_selector("#tl-id:has-text('chat-9')")
            assert await page.is_visible("#timeline")
            assert dialogs == []
