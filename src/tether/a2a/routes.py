"""Mounting A2A into ``tether serve``: the card, ``/a2a`` and the served-runs loop.

``/a2a`` (JSON-RPC) and ``/a2a/rest/...`` (HTTP+JSON, the SDK's REST routes over the
same handler) take the inbox's bearer tokens: no valid token is 401, a token whose roles
give nothing here (``invoke``, ``admin``, or a role that reads sessions) is 403, both
before the body is read; the body is read within the inbox's cap (``MAX_BODY``: 413 past
it) and handed to the SDK's dispatcher.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.server.routes.rest_routes import create_rest_routes
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tether.a2a.card import REST_PATH, RPC_PATH, build_card
from tether.a2a.executor import ServedRuns
from tether.a2a.handler import TetherRequestHandler, approver_of
from tether.a2a.tasks import SessionTaskStore
from tether.ops.server.auth import allowed, authenticate
from tether.ops.server.request_input import MAX_BODY

if TYPE_CHECKING:
    from starlette.types import Message as AsgiMessage

    from tether.agent import Agent
    from tether.durable.approval_types import Redactor
    from tether.ops.app_loader import AppFactory
    from tether.ops.server.api import Api

log = logging.getLogger("tether.a2a")
CARD_SESSION = "a2a-agent-card"
"""The session id the factory is called with to describe the agent (it is never run)."""


class _Context(DefaultServerCallContextBuilder):
    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        headers = context.state.get("headers") or {}
        # the bearer token stays out of the context (the SDK reads its version header)
        context.state["headers"] = {
            k: v for k, v in headers.items() if k.lower() not in ("authorization", "cookie")
        }
        context.state["approver"] = request.scope.get("tether.approver")
        context.state["refusals"] = request.scope.get("tether.refusals")
        return context


def a2a_routes(
    api: Api,
    factory: AppFactory,
    *,
    public_url: str | None = None,
    skills: list[dict[str, Any]] | None = None,
) -> tuple[list[Route], ServedRuns]:
    """The card and JSON-RPC routes over ``api``'s store and the ``--app`` factory, and
    the runs (start :meth:`ServedRuns.watch` in the server's lifespan, close it after)."""
    runs = ServedRuns(api.run, factory)

    async def redactors(session_id: str) -> Redactor | None:
        from tether.governance.redaction import redactor_of

        if api.agents is None:
            return None
        return redactor_of(await api.agents.get(session_id))

    def reader(context: ServerCallContext, meta: dict[str, Any]) -> bool:
        approver = approver_of(context)
        return meta.get("caller") == approver.name or allowed(approver, "sessions")

    tasks = SessionTaskStore(api.run, redactors, reader)
    handler = TetherRequestHandler(runs, tasks, api.policy)
    dispatcher = JsonRpcDispatcher(request_handler=handler, context_builder=_Context())
    described: dict[str, Any] = {}
    lock = asyncio.Lock()

    async def card(request: Request) -> Response:
        async with lock:
            if "agent" not in described:
                agent: Agent = await asyncio.to_thread(factory, session_id=CARD_SESSION)
                described["agent"] = agent
                await asyncio.to_thread(agent.close)
        base = public_url or str(request.base_url)
        shown = build_card(described["agent"], base, version=_version(), given=skills)
        return JSONResponse(agent_card_to_dict(shown))

    def guarded(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[..., Any]:
        async def guard(request: Request) -> Response:
            approver = await authenticate(request, api.run, "invoke")
            raw = await _capped(request)
            refusals: list[HTTPException] = []  # a 401/403 of the handler (handler.noted)
            scope = {**request.scope, "tether.approver": approver, "tether.refusals": refusals}
            response = await endpoint(Request(scope, _replay(raw, request.receive)))
            if refusals:
                raise refusals[0]
            return response

        return guard

    routes = [
        Route(AGENT_CARD_WELL_KNOWN_PATH, card, methods=["GET"]),
        Route(RPC_PATH, guarded(dispatcher.handle_requests), methods=["POST"]),
    ]
    rest = create_rest_routes(handler, context_builder=_Context(), path_prefix=REST_PATH)
    for route in rest:
        if isinstance(route, Route):
            routes.append(Route(route.path, guarded(route.endpoint), methods=route.methods))
    return routes, runs


async def _capped(request: Request) -> bytes:
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise HTTPException(413, f"the body is larger than {MAX_BODY} bytes")
    return raw


def _replay(
    raw: bytes, receive: Callable[[], Awaitable[AsgiMessage]]
) -> Callable[[], Awaitable[AsgiMessage]]:
    """The body read once more, then the connection's own messages (its disconnect)."""
    sent = False

    async def replayed() -> AsgiMessage:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    return replayed


def _version() -> str:
    try:
        return version("tether")
    except PackageNotFoundError:
        return "0"
