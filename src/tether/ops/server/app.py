"""``create_app(store)``: the Starlette application of ``tether serve``.

Routes (all ``/api/*`` and ``/openapi.json`` need a bearer token, see auth.py):

* ``GET /`` - the web inbox (public page shell, holds no data); ``/static/inbox.js|css``,
  ``/static/favicon.svg`` (the page's linked icon)
* ``GET /openapi.json`` - the OpenAPI document
* ``GET /api/approvals?session=&tool=&status=&limit=``, ``GET /api/approvals/{id}``
* ``POST /api/approvals/{id}/decision`` - ``{"decision": "approve"|"deny", "note"?, "edited_args"?}``;
  a call a crash left in doubt: ``"retry"|"abort"``, or ``"skip"`` with ``"result"``
* ``GET /api/sessions?status=&q=&offset=&limit=`` (a page with counts), ``GET
  /api/sessions/{id}?tail=``, ``GET /api/timeline/{id}`` (the id percent-encoded; it
  may contain ``/``)
* ``GET /api/audit?session=&after=&limit=``, ``GET /api/audit/verify``, ``GET
  /api/audit/export?session=`` (JSONL: the chain status, then the records)
* ``GET /api/me`` - the caller's name, roles and the views they may open
* ``GET /api/events?since=&wait=`` - long poll for inbox changes
* ``POST /ag-ui`` - with ``app_factory`` and the extra tether[ag-ui]: the agent over AG-UI
  (tether.ag_ui; role invoke)
* with ``app_factory`` (``--app``): ``GET /.well-known/agent-card.json`` and ``POST /a2a``,
  the agent over A2A (tether.a2a)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tether.durable.approval_types import ApprovalNotFound
from tether.durable.errors import StoreError
from tether.ops.app_loader import AppFactory
from tether.ops.server.api import Api, error, ok
from tether.ops.server.auth import CHALLENGE, Policy, authenticate
from tether.ops.server.inbox import SECURITY_HEADERS, make_inbox
from tether.ops.server.openapi import document
from tether.ops.server.refusals import store_refusal

if TYPE_CHECKING:
    from tether.durable import Store

log = logging.getLogger("tether.server")


def create_app(
    store: Store,
    *,
    policy: Policy | None = None,
    app_factory: AppFactory | None = None,
    title: str = "tether inbox",
    close_store: bool = False,
    public_url: str | None = None,
    a2a_skills: list[dict[str, Any]] | None = None,
) -> Starlette:
    """The server for ``store``. ``policy(approver, approval) -> bool`` decides who may
    decide what (default: roles, see :func:`~tether.ops.server.auth.default_policy`);
    ``app_factory(session_id=...)`` builds the session's Agent to validate edited
    arguments and redact views (once per session, kept and closed on shutdown: agents.py;
    without it, edits are refused; with it, the agent is also served over A2A, see
    tether.a2a: ``public_url`` is the base URL its card names, else the request's;
    ``a2a_skills`` the card's skills, else one per tool).
    ``close_store`` closes the store on shutdown."""
    api = Api(store, policy, app_factory)
    index, static = make_inbox(title)
    spec = document()

    async def openapi(request: Request) -> Response:
        await authenticate(request, api.run, "sessions")
        return ok(spec)

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/api/approvals", api.list_approvals, methods=["GET"]),
        Route("/api/approvals/{approval_id}", api.get_approval, methods=["GET"]),
        Route("/api/approvals/{approval_id}/decision", api.decide, methods=["POST"]),
        Route("/api/sessions", api.list_sessions, methods=["GET"]),
        Route("/api/sessions/{session_id:path}", api.get_session, methods=["GET"]),
        Route("/api/timeline/{session_id:path}", api.timeline, methods=["GET"]),
        Route("/api/audit", api.audit, methods=["GET"]),
        Route("/api/audit/verify", api.audit_verify, methods=["GET"]),
        Route("/api/audit/export", api.audit_export, methods=["GET"]),
        Route("/api/me", api.me, methods=["GET"]),
        Route("/api/events", api.events, methods=["GET"]),
    ]
    served = None
    if app_factory is not None:
        try:
            from tether.a2a.routes import a2a_routes
        except ImportError as exc:  # the a2a extra is not installed
            log.info("the agent is not served over A2A (pip install 'tether[a2a]'): %s", exc)
        else:
            a2a, served = a2a_routes(api, app_factory, public_url=public_url, skills=a2a_skills)
            routes += a2a
    if app_factory is not None:
        try:
            from tether.ag_ui import AgUiEndpoint
        except ImportError as exc:  # the extra tether[ag-ui] is not installed
            log.info("no AG-UI endpoint (pip install 'tether[ag-ui]'): %s", exc)
        else:
            ag_ui = AgUiEndpoint(api.run, api.policy, app_factory)
            routes.append(Route("/ag-ui", ag_ui.handle, methods=["POST"]))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if served is not None:
            served.watch()
        yield
        if served is not None:
            await served.close()
        await api.close(close_store=close_store)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        headers = dict(exc.headers or {})
        if exc.status_code == 401:
            headers.update(CHALLENGE)
        response = error(exc.status_code, str(exc.detail))
        response.headers.update({**SECURITY_HEADERS, **headers})
        return response

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(404, str(exc))

    async def store_error(request: Request, exc: Exception) -> Response:
        # the caller is authenticated here (auth.py answers store failures before that
        # without detail); the message names the store without its password
        log.warning("store error on %s %s: %s", request.method, request.url.path, exc)
        assert isinstance(exc, StoreError)
        status, headers = store_refusal(exc)
        return error(status, str(exc), headers=headers)

    handlers: dict[Any, Any] = {
        HTTPException: http_error,
        ApprovalNotFound: not_found,
        StoreError: store_error,
    }
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
