"""A real tether server (uvicorn) in a thread on a free 127.0.0.1 port, and a tiny client."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from ops_agents import delete_agent, transfer_agent, validating_agent
from starlette.applications import Starlette

from tether.durable import SQLiteStore, Store
from tether.ops.server import create_app

# every route that serves store data (or the API description); `/` and /static/* are the
# public page shell and hold no data
ROUTES = [
    ("GET", "/openapi.json"),
    ("GET", "/api/approvals"),
    ("GET", "/api/approvals/{approval_id}"),
    ("POST", "/api/approvals/{approval_id}/decision"),
    ("GET", "/api/sessions"),
    ("GET", "/api/sessions/{session_id}"),
    ("GET", "/api/timeline/{session_id}"),
    ("GET", "/api/audit"),
    ("GET", "/api/audit/verify"),
    ("GET", "/api/audit/export"),
    ("GET", "/api/me"),
    ("GET", "/api/events"),
]


@contextmanager
def live_server(app: Starlette) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields the base URL (http://127.0.0.1:PORT)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def call(
    method: str,
    url: str,
    token: str | None = None,
    body: Any = None,
    *,
    authorization: str | None = None,
    timeout: float = 30,
    headers_out: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request; (status, parsed JSON body or text). No proxies: 127.0.0.1 only.
    ``headers_out`` (if given) receives the response headers."""
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if authorization is not None:
        headers["Authorization"] = authorization
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            status, raw, kind = response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        status, raw, kind = exc.code, exc.read(), exc.headers
    if headers_out is not None:
        headers_out.update(kind.items())
    if (kind.get("content-type") or "").startswith("application/json"):
        return status, json.loads(raw)
    return status, raw.decode("utf-8", "replace")


ROLES = {
    "admin": ["admin"],
    "alice": ["approve:*"],
    "carol": ["approve:transfer"],
    "deleter": ["approve:delete*"],
    "viewer": ["viewer"],
    "auditor": ["auditor"],
    "nobody": ["deploy-bot"],
}


async def seed(store: Store) -> tuple[dict[str, str], str]:
    """Two suspended runs (a Confirm before transfer, a ToolContext.interrupt in delete) and
    one approver per role."""
    result = await transfer_agent(store, "pay-1", []).invoke_async("pay bob")
    assert result.stop_reason == "interrupt"
    result = await delete_agent(store, "del-1", []).invoke_async("delete it")
    assert result.stop_reason == "interrupt"
    tokens = {name: (await store.approvers.add(name, roles)).token for name, roles in ROLES.items()}
    tokens["removed"] = (await store.approvers.add("gone", ["admin"])).token
    assert await store.approvers.remove("gone")
    [approval] = await store.approvals.pending(session_id="pay-1")
    return tokens, approval.id


def get_ok(url: str, token: str) -> Any:
    """GET ``url`` as ``token``, which must answer 200; the parsed body."""
    status, body = call("GET", url, token)
    assert status == 200, body
    return body


async def decide_ok(url: str, token: str, approval_id: str, body: dict[str, Any]) -> None:
    """POST a decision on ``approval_id`` as ``token``, which must be accepted (200)."""
    decision = f"{url}/api/approvals/{approval_id}/decision"
    status, answer = await asyncio.to_thread(call, "POST", decision, token, body)
    assert status == 200, answer


@asynccontextmanager
async def seeded_live_server(
    path: Path,
) -> AsyncIterator[tuple[str, Store, dict[str, str], str]]:
    """A SQLite store at ``path`` seeded by seed() and a live server on it (--app: the
    validating agent): (url, the store, tokens, pay-1's approval id); the store is closed
    after the server."""
    store = SQLiteStore(path)
    tokens, approval_id = await seed(store)
    app = create_app(SQLiteStore(path), close_store=True, app_factory=validating_agent)
    try:
        with live_server(app) as url:
            yield url, store, tokens, approval_id
    finally:
        await store.close()
