"""report.to_html(): a self-contained page in a real browser (Debian's Chromium): its charts
render, it loads nothing, a hostile case name is inert text, secrets are masked, and the
session links point at the server's timeline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from browser import HAVE_CHROMIUM, NO_CHROMIUM, server_page
from eval_agents import factory

from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.evals import Case, Contains, Dataset, MaxTokens, Report, RunRow, Score, ToolTrajectory

HOSTILE = "<script>document.title='owned'</script>\u202eevil"
SECRET = "sk-livesecret123456"


def _report() -> Report:
    cases = [Case(f"search {i}", f"search topic{i}", expected_tools=["search"],
                  expected_output=f"topic{i}") for i in range(8)]  # fmt: skip
    cases += [
        Case("denied delete", "delete /etc", expected_tools=["delete_file"],
             expected_output="deleted"),
        Case("echo", "hello", expected_output="echo: hello"),
        Case(HOSTILE, "hello", expected_output="never"),
    ]  # fmt: skip
    evaluators = [Contains(), ToolTrajectory(), MaxTokens(60)]
    return Dataset(cases, evaluators).evaluate(factory)


def test_the_page_escapes_masks_and_links_without_a_browser(tmp_path: Path) -> None:
    report = _report()
    report.rows[0].error = f"provider said: api_key={SECRET}"
    path = tmp_path / "report.html"
    report.to_html(path, server_url="http://tether.local:8080/")
    page = path.read_text(encoding="utf-8")
    assert "<script" not in page  # the hostile name is text, and the page has no script
    assert "&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;\\u202eevil" in page
    assert "\u202e" not in page
    assert "content=\"default-src 'none'; style-src 'unsafe-inline'\"" in page  # loads nothing
    assert SECRET not in page
    assert "api_key=***" in page
    sid = report.rows[0].session_id
    assert sid is not None
    assert f'href="http://tether.local:8080/#timeline={sid}"' in page
    assert page.count('class="timeline"') == len(report.rows)
    urls = set(re.findall(r"[a-z]+://[^\"#]*", page))
    assert urls == {"http://tether.local:8080/", "http://www.w3.org/2000/svg"}  # nothing to fetch


def test_no_server_url_no_links_and_a_bad_url_is_refused(tmp_path: Path) -> None:
    report = _report()
    report.to_html(tmp_path / "plain.html")
    assert 'class="timeline"' not in (tmp_path / "plain.html").read_text()
    for bad in ("javascript:alert(1)", "ftp://x", "http://x/?q=1", "tether.local"):
        with pytest.raises(ConfigurationError) as caught:
            report.to_html(tmp_path / "bad.html", server_url=bad)
        assert "takes the tether server's http(s) URL" in str(caught.value)
    assert not (tmp_path / "bad.html").exists()  # nothing half-written


def test_a_report_read_back_from_json_is_masked_too(tmp_path: Path) -> None:
    row = RunRow("c", 0, "s-1", "error", None, error=f"Authorization: Bearer {SECRET}x9",
                 scores={"Judge": Score(0.2, False, f"token={SECRET}")})  # fmt: skip
    Report([row], ["Judge"]).to_json(tmp_path / "r.json")
    Report.from_json(tmp_path / "r.json").to_html(tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert SECRET not in page
    assert "Bearer ***" in page
    assert "token=***" in page


@pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)
async def test_the_page_renders_its_charts_in_chromium(tmp_path: Path) -> None:
    pytest.importorskip("playwright.async_api")
    report = _report()
    path = tmp_path / "report.html"
    report.to_html(path, server_url="http://127.0.0.1:9/")
    blocked: list[str] = []
    async with server_page(path.parent.as_uri(), width=1400, height=1000,
                           outside=blocked) as page:  # fmt: skip
        await page.goto(path.as_uri())
        assert await page.title() != "owned"
        assert await page.locator("script").count() == 0
        charts = page.locator("svg.chart")
        assert await charts.count() == 4
        for i in range(4):
            box: Any = await charts.nth(i).bounding_box()
            assert box is not None
            assert box["width"] > 100
            assert box["height"] > 50
        bars = page.locator("svg.chart rect.bar")
        assert await bars.count() > 4
        sizes = [await bars.nth(i).bounding_box() for i in range(await bars.count())]
        assert any(b is not None and b["height"] > 1 for b in sizes)
        hostile = page.locator("tr.run td:first-child", has_text="document.title")
        assert "<script>document.title='owned'</script>\\u202eevil" in await hostile.inner_text()
        link = page.locator("a.timeline").first
        assert (await link.get_attribute("href") or "").startswith("http://127.0.0.1:9/#timeline=")
        await page.screenshot(path=str(tmp_path / "eval-report.png"), full_page=True)
    assert blocked == []  # the page loaded nothing but itself
    assert (tmp_path / "eval-report.png").stat().st_size > 10_000


@pytest.mark.skipif(not HAVE_CHROMIUM, reason=NO_CHROMIUM)
async def test_a_session_link_opens_that_runs_timeline_on_the_server(tmp_path: Path) -> None:
    pytest.importorskip("playwright.async_api")
    from live_server import live_server

    from tether.ops.server import create_app

    db = tmp_path / "evals.db"
    store = SQLiteStore(db)
    cases = [Case("lookup", "search cats", expected_tools=["search"])]
    report = await Dataset(cases, [ToolTrajectory()]).evaluate_async(factory, store=store)
    token = (await store.approvers.add("vera", ["viewer"])).token
    await store.close()
    (row,) = report.rows
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        report.to_html(tmp_path / "report.html", server_url=url)
        async with server_page(url, width=1400, height=1000) as page:
            await page.goto((tmp_path / "report.html").as_uri())
            await page.click("a.timeline")
            await page.wait_for_url(f"{url}/#timeline={row.session_id}")
            await page.fill("#token", token)
            await page.click("#signin")
            await page.wait_for_selector(f"#tl-id:has-text('{row.session_id}')")
            await page.wait_for_selector("#steps tr[data-kind='tool']")
