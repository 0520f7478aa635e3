"""The web inbox in a real browser: Debian's Chromium driven by Playwright (never
``playwright install``; ``make test`` installs the ``chromium`` package when missing)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import live_server, seed
from ops_agents import SECRET, transfer_agent, validating_agent

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.server import create_app

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)


async def sign_in(page: Any, token: str) -> None:
    await page.fill("#token", token)
    await page.click("#signin")


async def test_an_approver_approves_with_an_edited_argument_and_sees_the_session_done(
    tmp_path: Path,
) -> None:
    db = tmp_path / "inbox.db"
    store = SQLiteStore(db)
    tokens, approval_id = await seed(store)  # pay-1 waits for a Confirm before transfer
    outside: list[str] = []
    app = create_app(SQLiteStore(db), app_factory=validating_agent, close_store=True)
    with live_server(app) as url:
        async with server_page(url, width=1280, height=900, outside=outside) as page:
            await page.goto(url + "/")

            # a token without any role the inbox knows: refused in the page
            await sign_in(page, tokens["nobody"])
            await page.wait_for_selector("#message:has-text('Refused')")
            assert "nobody" in await page.inner_text("#message")
            assert await page.is_visible("#login")

            # a token that may read but only decide delete tools: refused when approving
            await sign_in(page, tokens["deleter"])
            row = page.locator(f"#approvals tr[data-id='{approval_id}']")
            await row.wait_for()
            await row.locator("button.open").click()
            await page.wait_for_selector("#d-view-only", state="visible")
            await page.click("#approve")
            await page.wait_for_selector("#message:has-text('may not decide')")
            assert "deleter" in await page.inner_text("#message")
            assert (await store.approvals.get(approval_id)).status == "pending"
            await page.click("#signout")

            # alice (approve:*) sees the redacted request and the transcript, edits, approves
            await sign_in(page, tokens["alice"])
            await row.wait_for()
            cells = await row.inner_text()
            assert "transfer" in cells
            assert "***" in cells
            assert SECRET not in await page.content()
            await row.locator("button.open").click()
            await page.wait_for_selector("#transcript li.here")
            assert "transfer" in await page.inner_text("#transcript")
            assert await page.is_hidden("#d-view-only")
            edited = (await page.input_value("#edit")).replace("500", "5")
            await page.fill("#edit", edited)
            await page.fill("#note", "only 5 for now")
            await page.click("#approve")
            await page.wait_for_selector("#message:has-text('Approved')")
            await page.wait_for_selector(
                "#recent-list li[data-session='pay-1'] .status[data-status='ready']"
            )
            decided = await store.approvals.get(approval_id)
            assert decided.decided_by == "alice"
            assert decided.edited_args == {"amount": 5}
            assert decided.note == "only 5 for now"

            # the pending list updates by itself: a new request shows up without a reload
            await transfer_agent(store, "pay-2", []).invoke_async("pay bob again")
            [second] = await store.approvals.pending(session_id="pay-2")
            await page.locator(f"#approvals tr[data-id='{second.id}']").wait_for()

            # a worker resumes pay-1 (here: answers_for + resume in the test process)
            ran: list[dict[str, Any]] = []
            answers = await store.approvals.answers_for("pay-1")
            done = await transfer_agent(SQLiteStore(db), "pay-1", ran).resume_async(answers)
            assert done.stop_reason == "end_turn"
            assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]
            status = "#recent-list li[data-session='pay-1'] .status[data-status='completed']"
            await page.wait_for_selector(status)
            await page.locator(f"#approvals tr[data-id='{second.id}'] button.open").click()
            await page.wait_for_selector("#transcript li.here")
            # to look at it afterwards: TETHER_SCREENSHOT=/some/where.png pytest ...
            shot = os.environ.get("TETHER_SCREENSHOT") or str(tmp_path / "inbox.png")
            png = await page.screenshot(path=shot, full_page=True)
            assert len(png) > 10_000
            assert SECRET not in await page.content()
    await store.close()
    assert outside == []  # nothing loaded from anywhere but the server under test


BIDI_PATH = "/etc/\u202etxt.egatsgol/pmt/"  # shows as "/etc//tmp/logstage.txt" when obeyed


class ConfirmDeletes(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        path = event.tool_call.arguments.get("path")
        return Confirm(f"delete {path}?\x1b[2K\u200b") if event.tool_call.name == "delete" else None


def spoofing_agent(store: SQLiteStore, ran: list[str]) -> Agent:
    @tool
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return {
            "text": f"cleaning {BIDI_PATH}",
            "tool_calls": [{"name": "delete", "args": {"path": BIDI_PATH}}],
        }

    return Agent(
        model=ScriptedModel(script),
        tools=[delete],
        interventions=[ConfirmDeletes()],
        store=store,
        session_id="spoof-1",
    )


async def test_bidi_and_invisible_characters_are_shown_as_escapes_in_the_page(
    tmp_path: Path,
) -> None:
    db = tmp_path / "spoof.db"
    store = SQLiteStore(db)
    assert (await spoofing_agent(store, []).invoke_async("clean up")).stop_reason == "interrupt"
    [approval] = await store.approvals.pending()
    token = (await store.approvers.add("admin", ["admin"])).token
    app = create_app(SQLiteStore(db), close_store=True)
    with live_server(app) as url:
        async with server_page(url, width=1280, height=900) as page:
            await page.goto(url + "/")
            await sign_in(page, token)
            row = page.locator(f"#approvals tr[data-id='{approval.id}']")
            await row.wait_for()
            cells = await row.inner_text()
            assert "/etc/\\u202etxt.egatsgol/pmt/" in cells
            assert "\\u001b[2K\\u200b" in cells  # the reason's ESC and zero-width space
            await row.locator("button.open").click()
            await page.wait_for_selector("#transcript li.here")
            shown = await page.evaluate("document.body.innerText")
            for char in ("\u202e", "\x1b", "\u200b"):
                assert char not in shown, f"{char!r} reached the page"
            assert "cleaning /etc/\\u202etxt.egatsgol/pmt/" in await page.inner_text("#transcript")
            assert "\\u202e" in await page.inner_text("#d-args")
            edit = await page.input_value("#edit")
            assert "\u202e" not in edit
            assert json.loads(edit) == {"path": BIDI_PATH}  # the same value, visibly
            await page.click("#approve")
            await page.wait_for_selector("#message:has-text('Approved')")
    decided = await store.approvals.get(approval.id)
    assert (decided.status, decided.edited_args) == ("approved", None)
    await store.close()
