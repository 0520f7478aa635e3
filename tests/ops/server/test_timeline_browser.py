"""The sessions list and a session's timeline in a real browser (Debian's Chromium driven by
Playwright, as in test_inbox_browser.py). Screenshots of both are saved in the test's temp
folder, or in ``TETHER_SCREENSHOT_DIR`` when set."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import call, live_server, seed
from ops_agents import SECRET, transfer_agent, validating_agent

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.ops.server import create_app

sys.path.insert(0, str(Path(__file__).parents[2] / "support"))

import agent_tree

MANY = 2000
HOSTILE_ID = "evil/\u202egnp.exe<img src=x>"
MARKUP = "<img src=x id=injected><script>window.pwned=1</script>"

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)


def hostile_agent(store: SQLiteStore) -> Agent:
    @tool
    def fetch(url: str) -> str:
        """Fails with markup and control characters in its error."""
        raise RuntimeError(f"bad {url} \x1b[31m{MARKUP}")

    def script(messages: list[Any], tools: list[dict[str, Any]]) -> Any:
        if messages[-1].role == "tool":
            return "stopped \u200b" + MARKUP
        return {"text": MARKUP, "tool_calls": [{"name": "fetch", "args": {"url": MARKUP}}]}

    return Agent(model=ScriptedModel(script), tools=[fetch], store=store, session_id=HOSTILE_ID)


async def _rows(page: Any, selector: str) -> list[dict[str, str]]:
    return list(
        await page.eval_on_selector_all(
            selector, "rows => rows.map(r => ({kind: r.dataset.kind, status: r.dataset.status}))"
        )
    )


async def test_sessions_list_timeline_charts_and_audit_view(tmp_path: Path) -> None:
    db = tmp_path / "timeline.db"
    store = SQLiteStore(db)
    tokens, approval_id = await seed(store)
    for index in range(MANY):
        await store.create(f"batch/{index:04d}")
    await hostile_agent(store).invoke_async("go")
    # a three-level agent tree (4 sessions), its two questions approved, resumed, completed
    effects = tmp_path / "effects.txt"
    assert (await asyncio.to_thread(agent_tree.build(str(db), effects), "plan")).interrupts
    for asked in await store.approvals.pending(session_id="tree-1"):
        await store.approvals.decide(asked.id, "approve", decided_by="alice", note="ok")
    answers = await store.approvals.answers_for("tree-1")
    tree = await asyncio.to_thread(agent_tree.build(str(db), effects).resume, answers)
    assert tree.stop_reason == "end_turn"
    shots = Path(os.environ.get("TETHER_SCREENSHOT_DIR") or tmp_path)
    outside: list[str] = []
    app = create_app(SQLiteStore(db), app_factory=validating_agent, close_store=True)
    with live_server(app) as url:
        edit = {"decision": "approve", "edited_args": {"amount": 5}, "note": "only 5 <b>now</b>"}
        decision = f"{url}/api/approvals/{approval_id}/decision"
        status, body = await asyncio.to_thread(call, "POST", decision, tokens["alice"], edit)
        assert status == 200, body
        answers = await store.approvals.answers_for("pay-1")  # a worker resumes pay-1
        ran: list[dict[str, Any]] = []
        await transfer_agent(SQLiteStore(db), "pay-1", ran).resume_async(answers)
        assert ran == [{"to": "bob", "amount": 5, "api_token": SECRET}]

        async with server_page(url, width=1400, height=1000, outside=outside) as page:
            await page.goto(url + "/")
            await page.fill("#token", tokens["viewer"])
            await page.click("#signin")
            await page.wait_for_selector("#tabs", state="visible")
            await page.click("#tab-sessions")

            # the list: paged on the server, 2,000 and more sessions
            total = MANY + 7
            await page.wait_for_selector(f"#s-range:has-text('1–50 of {total}')")
            assert await page.locator("#session-list tbody tr").count() == 50
            await page.click("#s-next")
            await page.wait_for_selector(f"#s-range:has-text('51–100 of {total}')")
            await page.select_option("#s-status", "suspended")
            await page.wait_for_selector("#s-range:has-text('1–1 of 1')")
            assert await page.inner_text("#session-list tbody") == await page.inner_text(
                "#session-list tbody tr[data-session='del-1']"
            )
            await page.select_option("#s-status", "")
            await page.fill("#s-search", "pay-")
            row = page.locator("#session-list tr[data-session='pay-1']")
            await page.wait_for_selector("#s-range:has-text('1–1 of 1')")
            cells = await row.inner_text()
            assert "completed" in cells
            assert await row.locator("td.prompt").inner_text() == "pay bob"  # the first prompt
            await page.fill("#s-search", "")
            await page.wait_for_selector(f"#s-range:has-text('of {total}')")
            await page.screenshot(path=str(shots / "sessions.png"), full_page=False)
            # the list updates by itself (the shared change cursor): a new session shows up
            await store.create("zz/new")
            await page.wait_for_selector(f"#s-range:has-text('1–50 of {total + 1}')")
            await page.wait_for_selector("#session-list tr[data-session='zz/new']")
            await page.fill("#s-search", "pay-")
            await row.wait_for()

            # the timeline of pay-1: suspended, approved with an edit, resumed, completed
            await row.locator("button.link").click()
            await page.wait_for_selector("#steps tr.kind-end")
            steps = await _rows(page, "#steps tbody tr")
            assert [s["kind"] for s in steps] == [
                "run", "input", "model", "verdict", "interrupt", "suspend", "wait",
                "run", "verdict", "tool", "model", "end",
            ]  # fmt: skip
            assert steps[9]["status"] == "ok"
            assert steps[4]["status"] == "answered"
            await page.click("#steps tr[data-kind='tool']")
            detail = await page.inner_text("#step-detail")
            assert '"amount":5' in detail.replace(" ", "")
            assert "edited by alice" in detail
            await page.click("#steps tr[data-kind='interrupt']")
            detail = await page.inner_text("#step-detail")
            assert "approved by alice" in detail
            assert "only 5 <b>now</b>" in detail  # markup in a note is text
            # charts: two model calls, the cumulative line, four parts of the time split
            assert await page.locator("#chart-tokens rect.bar-in").count() == 2
            assert await page.locator("#chart-tokens rect.bar-out").count() == 2
            assert await page.locator("#chart-tokens polyline.cumulative").count() == 1
            assert await page.locator("#chart-split rect").count() == 4
            assert await page.locator("#steps svg.axis rect").count() == len(steps)
            assert SECRET not in await page.content()
            await page.screenshot(path=str(shots / "timeline.png"), full_page=True)

            # a viewer cannot open the audit view: no button for it, and the server refuses
            assert await page.is_hidden("#tl-audit")
            await page.evaluate("showAudit([])")
            await page.wait_for_selector("#message:has-text('auditor')")
            assert await page.is_hidden("#audit-view")
            assert await page.locator("#sd-links button", has_text="audit records").count() == 0

            # hostile data: shown as text with escapes, never obeyed or parsed as markup
            await page.click("#tl-back")
            await page.fill("#s-search", "evil/")
            hostile = page.locator("#session-list tbody tr button.link")
            await page.wait_for_function(
                "() => [...document.querySelectorAll('#session-list tbody tr')]"
                ".map(r => r.dataset.session).join() === " + repr(HOSTILE_ID).replace("'", '"')
            )
            assert "\\u202e" in await hostile.inner_text()
            hostile_prompt = page.locator("#session-list tbody tr td.prompt")
            assert await hostile_prompt.inner_text() == "go"
            await hostile.click()
            await page.wait_for_selector("#steps tr.failed")
            assert "\\u202egnp.exe<img src=x>" in await page.inner_text("#tl-id")
            await page.click("#steps tr.failed")
            detail = await page.inner_text("#step-detail")
            assert "\\u001b[31m" in detail
            assert MARKUP in detail
            shown = await page.evaluate("document.body.innerText")
            for char in ("\u202e", "\x1b", "\u200b"):
                assert char not in shown
            assert await page.locator("#injected").count() == 0
            assert await page.evaluate("window.pwned === undefined")

            # a token with only the auditor role: the page opens on the sessions (no inbox
            # for it), the timeline, the approval as the timeline knows it, the audit view
            # with the chain status, and the server's JSONL export
            await page.click("#signout")
            await page.fill("#token", tokens["auditor"])
            await page.click("#signin")
            await page.wait_for_selector("#sessions", state="visible")
            assert await page.is_hidden("#tab-inbox")
            assert await page.is_hidden("#inbox")
            await page.fill("#s-search", "pay-1")
            await row.locator("button.link").click()
            await page.wait_for_selector("#steps tr.kind-end")
            await page.wait_for_selector("#tl-audit", state="visible")  # once the timeline drew it
            await page.click("#steps tr[data-kind='interrupt']")
            await page.locator("#sd-links button", has_text="approval apr_").click()
            await page.wait_for_selector("#message:has-text('approved by alice')")
            await page.locator("#sd-links button", has_text="audit records").click()
            await page.wait_for_selector("#av-verify:has-text('chain verified')")
            assert await page.locator("#audit-records tbody tr.selected").count() >= 2
            events = await page.inner_text("#audit-records")
            assert "approval.decided" in events
            assert "interrupt.raised" in events
            async with page.expect_download() as info:
                await page.click("#av-export")
            download = await info.value
            assert download.suggested_filename == "audit-pay-1.jsonl"
            lines = (await asyncio.to_thread(Path(await download.path()).read_text)).splitlines()
            chain = json.loads(lines[0])["chain"]
            assert chain["ok"] is True
            exported = [json.loads(line) for line in lines[1:]]
            assert {r["session_id"] for r in exported} == {"pay-1"}
            assert [r["seq"] for r in exported] == sorted(r["seq"] for r in exported)
            assert len(exported) == await page.locator("#audit-records tbody tr").count()

            # a link to a timeline (/#timeline=ID): the agent tree, sub-agents nested
            await page.evaluate("location.hash = '#timeline=tree-1'")
            await page.reload()
            await page.wait_for_selector("#steps tr[data-depth='2'][data-kind='tool']")
            nested = await page.eval_on_selector_all(
                "#steps tbody tr", "rows => rows.map(r => [r.dataset.depth, r.dataset.session])"
            )
            assert {depth for depth, _ in nested} == {"0", "1", "2"}
            assert ["1", "tree-1/researcher#1.p1"] in nested
            writes = page.locator("#steps tr[data-depth='2'][data-kind='tool']")
            assert await writes.count() == 2
            assert (await writes.first.inner_text()).count("↳ write") == 1
            await writes.first.click()
            detail = await page.inner_text("#step-detail")
            assert "sub-agent, level 2" in detail
            await page.locator("#steps tr[data-depth='2'][data-kind='interrupt']").first.click()
            assert "approved by alice" in await page.inner_text("#step-detail")
            await page.screenshot(path=str(shots / "timeline-tree.png"), full_page=True)

            # from an approval in the inbox to its session's timeline
            await page.click("#signout")
            await page.fill("#token", tokens["alice"])
            await page.click("#signin")
            [pending] = await store.approvals.pending(session_id="del-1")
            await page.locator(f"#approvals tr[data-id='{pending.id}'] button.open").click()
            await page.click("#d-timeline")
            await page.wait_for_selector("#tl-id:has-text('del-1')")
            await page.wait_for_selector("#steps tr.kind-wait")
    await store.close()
    assert outside == []
    assert (shots / "timeline.png").stat().st_size > 10_000
    assert (shots / "timeline-tree.png").stat().st_size > 10_000
