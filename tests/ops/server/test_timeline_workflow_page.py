"""A workflow's timeline on the page, in Debian's Chromium (Playwright): node rows nested
at every depth with their kind, a pending interrupt deep in a branch on its node rows
with its address, each node's own steps under it, no model-call rows for the conductors,
and what a node carries shown as text. Screenshots go to the test's temp folder, or to
``TETHER_SCREENSHOT_DIR``."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from live_server import live_server
from workflow_agents import echo, review_workflow

from tether import Agent
from tether.durable import SQLiteStore
from tether.ops.server import create_app
from tether.workflows import Sequential, StepContext

pytest.importorskip("playwright.async_api")
pytestmark = pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)

ADDRESS = "review#2/legal#1/confirm:ConfirmWrites"
MARKUP = "<img src=x id=injected>\u202egnp.exe"


def hostile_flow(store: SQLiteStore) -> Sequential:
    def shout(step: StepContext) -> str:
        return MARKUP  # the next node's task: shown as text, never as markup

    return Sequential(shout, Agent(echo("said"), name="said"), store=store, session_id="wf-2")


async def rows(page: Any) -> list[dict[str, Any]]:
    return list(
        await page.eval_on_selector_all(
            "#steps tbody tr",
            """rows => rows.map(r => ({kind: r.dataset.kind, depth: Number(r.dataset.depth),
                session: r.dataset.session, path: r.dataset.path || null,
                text: r.innerText,
                indent: parseFloat(getComputedStyle(r.querySelector('td.title')).paddingLeft)}))""",
        )
    )


async def test_a_workflow_timeline_draws_its_nodes_nested_with_a_deep_interrupt(
    tmp_path: Path,
) -> None:
    db = tmp_path / "wf.db"
    store = SQLiteStore(db)
    viewer = (await store.approvers.add("viewer", ["viewer"])).token
    first = await asyncio.to_thread(review_workflow(SQLiteStore(db), tmp_path / "fx").run, "plan")
    assert [i.name for i in first.interrupts] == [ADDRESS]
    assert (await asyncio.to_thread(hostile_flow(SQLiteStore(db)).run, "go")).stop_reason == (
        "end_turn"
    )
    await store.close()
    shots = Path(os.environ.get("TETHER_SCREENSHOT_DIR") or tmp_path)
    outside: list[str] = []
    app = create_app(SQLiteStore(db), close_store=True)
    with live_server(app) as url:
        async with server_page(url, width=1400, height=1000, outside=outside) as page:
            await page.goto(url + "/")
            await page.fill("#token", viewer)
            await page.click("#signin")
            await page.wait_for_selector("#tabs", state="visible")
            await page.evaluate("location.hash = '#timeline=wf-1'")
            await page.reload()
            await page.wait_for_selector(
                "#steps tr[data-kind='node'][data-path='review#2/legal#1']"
            )
            assert "sequential workflow pipeline" in await page.inner_text("#tl-holder")
            drawn = await rows(page)
            by_path = {r["path"]: r for r in drawn if r["kind"] == "node"}
            assert set(by_path) == {"draft#1", "review#2", "review#2/legal#1", "review#2/tech#2"}
            review, legal = by_path["review#2"], by_path["review#2/legal#1"]
            assert (review["depth"], legal["depth"]) == (0, 1)
            assert legal["indent"] > review["indent"]  # drawn one level in
            assert "workflow" in review["text"]  # the kind's badge
            assert "agent" in legal["text"]
            assert f"waiting: {ADDRESS}" in review["text"]
            assert f"waiting: {ADDRESS}" in legal["text"]
            assert f"waiting: {ADDRESS}" not in by_path["review#2/tech#2"]["text"]
            # the node's own steps, one level further in; no conductor model calls
            legal_session = "wf-1/review#3.2/legal#1.1"
            own = [r for r in drawn if r["session"] == legal_session]
            assert {r["depth"] for r in own} == {2}
            assert "model" in {r["kind"] for r in own}
            assert all(r["indent"] > legal["indent"] for r in own)
            conductors = {"wf-1", "wf-1/review#3.2"}
            assert [r for r in drawn if r["kind"] == "model" and r["session"] in conductors] == []
            await page.click("#steps tr[data-kind='node'][data-path='review#2/legal#1']")
            detail = await page.inner_text("#step-detail")
            assert "review#2/legal#1" in detail
            assert f"{ADDRESS} (waiting)" in detail
            assert "round" not in detail  # a Parallel's batch is a step
            assert "step" in detail
            await page.screenshot(path=str(shots / "timeline-workflow.png"), full_page=True)

            # what a node carries (its task: the previous node's output) shown as text
            await page.evaluate("location.hash = '#timeline=wf-2'")
            await page.reload()
            said = "#steps tr[data-kind='node'][data-path='said#2']"
            await page.wait_for_selector(said)
            await page.click(said)
            detail = await page.inner_text("#step-detail")
            assert "<img src=x id=injected>\\u202egnp.exe" in detail
            assert await page.locator("#injected").count() == 0
    assert outside == []
