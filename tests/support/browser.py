"""A page in Debian's Chromium driven by Playwright (never ``playwright install``; ``make
test`` installs the ``chromium`` package when missing), for the web inbox tests."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
TIMEOUT = 15_000  # ms, for each wait in the page
HAVE_CHROMIUM = os.access(CHROMIUM, os.X_OK)
NO_CHROMIUM = (
    f"{CHROMIUM} is missing and could not be installed (make test runs "
    "'apt-get install -y chromium', which needs root and Debian's package mirror)"
)


@asynccontextmanager
async def server_page(
    url: str, *, width: int = 1280, height: int = 900, outside: list[str] | None = None
) -> AsyncIterator[Any]:
    """A fresh page; with ``outside``, it may load only from ``url`` (any other request is
    aborted and recorded there, so a test can assert the page needs nothing else)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = await browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(TIMEOUT)
            if outside is not None:
                blocked = outside

                async def only_this_server(route: Any) -> None:
                    if route.request.url.startswith(url + "/"):
                        await route.continue_()
                    else:
                        blocked.append(route.request.url)
                        await route.abort()

                await page.route("**/*", only_this_server)
            yield page
        finally:
            await browser.close()
