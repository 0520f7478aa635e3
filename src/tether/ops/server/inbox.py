"""The web inbox: one server-rendered page plus its script and style sheet.

Nothing loads from outside the server (the Content-Security-Policy says so too). The
page holds no data: its script asks the API with the token typed into the login form,
kept in ``sessionStorage`` and sent as an ``Authorization`` header. No cookie is ever
set, so a cross-site page cannot make the browser send credentials (no CSRF).
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from tether import __version__

Endpoint = Callable[[Request], Awaitable[Response]]
STATIC: Final = {
    "inbox.js": "text/javascript",
    "sessions.js": "text/javascript",
    "inbox.css": "text/css",
    "favicon.svg": "image/svg+xml",
}
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@cache
def _asset(name: str) -> str:
    return (resources.files("tether.ops.server") / "static" / name).read_text("utf-8")


def page(title: str) -> str:
    """The inbox HTML with the store's name (password-free) filled in."""
    text = _asset("inbox.html")
    return text.replace("{{title}}", html.escape(title)).replace("{{version}}", __version__)


def make_inbox(title: str) -> tuple[Endpoint, Endpoint]:
    """The ``/`` and ``/static/{name}`` handlers."""

    async def index(request: Request) -> Response:
        return HTMLResponse(page(title), headers=SECURITY_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(_asset(name), media_type=STATIC[name], headers=SECURITY_HEADERS)

    return index, static
