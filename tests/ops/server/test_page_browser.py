"""The page in a real browser (Debian's Chromium through Playwright): a call in doubt has its
own answers, the shell hides what needs a sign-in, nothing 404s, wide data wraps inside
the page, the token chart has axis values, and a malformed link does not stop the updates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import ROLES, live_server, seed
from ops_agents import SECRET, crash_mid_call, effect_agent, transfer_agent

from tether.durable import SQLiteStore
from tether.ops.server import create_app

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)

VIEWPORT = 1440
LONG = "x" * 400 + "/" + "y" * 400  # one word: it can only wrap if the cell lets it


async def sign_in(page: Any, token: str) -> None:
    await page.fill("#token", token)
    await page.click("#signin")


def failed_responses(page: Any) -> list[str]:
    """Every response of the page with a 4xx/5xx status, as it arrives."""
    failed: list[str] = []
    page.on(
        "response",
        lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None,
    )
    return failed


async def test_a_call_in_doubt_is_answered_retry_skip_or_abort_in_the_page(tmp_path: Path) -> None:
    db = tmp_path / "doubt.db"
    store = SQLiteStore(db)
    ids = {}
    for session in ("doubt-skip", "doubt-retry"):
        await crash_mid_call(store, session)
        assert (await effect_agent(store, session, []).resume_async()).stop_reason == "interrupt"
        [approval] = await store.approvals.pending(session_id=session)
        ids[session] = approval.id
    token = (await store.approvers.add("alice", ROLES["alice"])).token
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        async with server_page(url, width=1280, height=900) as page:
            await page.goto(url + "/")
            await sign_in(page, token)
            row = page.locator(f"#approvals tr[data-id='{ids['doubt-skip']}']")
            await row.wait_for()
            assert "in doubt: may have run" in await row.inner_text()
            await row.locator("button.open").click()
            await page.wait_for_selector("#in-doubt-buttons", state="visible")
            # no plain Approve / Deny, nor an argument editor: its own answers, with why
            for hidden in ("#approve", "#deny", "#edit"):
                assert await page.is_hidden(hidden)
            warning = await page.inner_text("#in-doubt-warning")
            assert "may have run" in warning
            assert "side effect may happen twice" in warning
            # the transcript is drawn after the buttons (its own fetch): wait for it
            await page.wait_for_selector("#transcript:has-text('may have run')")
            transcript = await page.inner_text("#transcript")
            assert "may have run" in transcript
            assert "not run yet" not in transcript
            assert SECRET not in await page.content()

            await page.click("#skip")  # a skip needs the result the call returned
            await page.wait_for_selector("#message:has-text('Skip needs a result')")
            assert (await store.approvals.get(ids["doubt-skip"])).status == "pending"
            await page.fill("#skip-result", "sent already: ticket 7")
            await page.click("#skip")
            await page.wait_for_selector("#message:has-text('Skipped')")
            skipped = await store.approvals.get(ids["doubt-skip"])
            assert (skipped.decided_by, skipped.response) == (
                "alice",
                {"skip": "sent already: ticket 7"},
            )

            other = page.locator(f"#approvals tr[data-id='{ids['doubt-retry']}'] button.open")
            await other.click()
            await page.wait_for_selector("#in-doubt-buttons", state="visible")
            await page.click("#retry")
            await page.wait_for_selector("#message:has-text('Retry')")
    assert (await store.approvals.get(ids["doubt-retry"])).decision == "approve"
    ran: list[str] = []
    skipped_run = await effect_agent(store, "doubt-skip", ran).resume_async(
        await store.approvals.answers_for("doubt-skip")
    )
    assert (skipped_run.text, ran) == ("finished: sent already: ticket 7", [])
    retried = await effect_agent(store, "doubt-retry", ran).resume_async(
        await store.approvals.answers_for("doubt-retry")
    )
    assert (retried.text, ran) == ("finished: effect done", [SECRET])
    await store.close()


async def test_the_shell_tabs_favicon_audit_width_and_token_axis(tmp_path: Path) -> None:
    db = tmp_path / "page.db"
    store = SQLiteStore(db)
    tokens, _ = await seed(store)
    await store.audit.append("note.long", {"path": LONG}, session_id="pay-1")
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        async with server_page(url, width=VIEWPORT, height=900) as page:
            failed = failed_responses(page)
            await page.goto(url + "/")
            await page.wait_for_selector("#login", state="visible")
            # before sign-in: the sign-in form only, no tabs
            assert await page.is_hidden("#tabs")
            assert await page.is_hidden("#tab-inbox")
            icon = await page.evaluate(
                "fetch(document.querySelector('link[rel=icon]').href).then(r => r.status)"
            )
            assert icon == 200

            await sign_in(page, tokens["auditor"])
            await page.wait_for_selector("#sessions", state="visible")
            assert await page.is_visible("#tabs")
            await page.fill("#s-search", "pay-1")
            await page.locator("#session-list tr[data-session='pay-1'] button.link").click()
            await page.wait_for_selector("#steps tr.kind-suspend")

            # the token chart has values on its axes: tokens on the left, calls below
            ticks = await page.eval_on_selector_all(
                "#chart-tokens text.tick-y", "ts => ts.map(t => t.textContent)"
            )
            assert len(ticks) == 3
            assert ticks[0] == "0"
            top = await page.evaluate(
                "Math.max(...timelineData.usage.calls.map(c => c.input + c.output))"
            )
            assert top > 0
            assert ticks[2] == str(top)
            calls = await page.eval_on_selector_all(
                "#chart-tokens text.tick-x", "ts => ts.map(t => t.textContent)"
            )
            assert calls == ["call 1"]

            # the auditor's audit table stays inside the viewport, however long a record
            await page.click("#tl-audit")
            await page.wait_for_selector("#av-verify:has-text('chain verified')")
            await page.wait_for_selector("#audit-records td:has-text('note.long')")
            width = await page.evaluate("document.documentElement.scrollWidth")
            table = await page.evaluate(
                "document.querySelector('#audit-records').getBoundingClientRect().right"
            )
            assert width <= VIEWPORT, f"the page is {width} px wide in a {VIEWPORT} px viewport"
            assert table <= VIEWPORT
            await page.reload()  # a second page load (the timeline's link): nothing fails
            await page.wait_for_selector("#steps tr.kind-suspend")
    assert failed == []
    await store.close()


async def test_a_malformed_timeline_link_is_ignored_and_the_updates_still_run(
    tmp_path: Path,
) -> None:
    db = tmp_path / "link.db"
    store = SQLiteStore(db)
    tokens, approval_id = await seed(store)
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        async with server_page(url, width=1280, height=900) as page:
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            await page.goto(url + "/#timeline=%E0%A4%A")
            await sign_in(page, tokens["alice"])
            await page.wait_for_selector("#message:has-text('Ignored a malformed link')")
            await page.locator(f"#approvals tr[data-id='{approval_id}']").wait_for()
            assert await page.evaluate("location.hash") == ""
            # live updates run: a new request shows up without a reload
            await transfer_agent(store, "pay-2", []).invoke_async("pay bob again")
            [second] = await store.approvals.pending(session_id="pay-2")
            await page.locator(f"#approvals tr[data-id='{second.id}']").wait_for()
            # a good link still opens its timeline
            await page.evaluate("location.hash = '#timeline=pay-2'")
            await page.reload()
            await page.wait_for_selector("#tl-id:has-text('pay-2')")
            assert errors == []
    await store.close()
