"""``tether serve``: the HTTP API and web inbox for approvals, sessions and the audit log.

Needs the ``server`` extra (Starlette and uvicorn): ``pip install 'tether[server]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.ops.server.app import create_app
from tether.ops.server.auth import Policy, default_policy

if TYPE_CHECKING:
    from tether.ops.server.api import AppFactory

__all__ = ["Policy", "check_store", "create_app", "default_policy", "load_factory", "serve"]


def load_factory(spec: str) -> AppFactory:
    """``module:factory`` -> the callable (``factory(session_id=...) -> Agent``)."""
    import importlib
    import os
    import sys

    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # `tether serve --app myapp:make` from the app's folder
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ValueError(f"{spec!r}: use module:factory")
    factory: Any = getattr(importlib.import_module(module), name)
    if not callable(factory):
        raise ValueError(f"{spec}: {name} is not callable")
    return factory  # type: ignore[no-any-return]


def check_store(store_url: str) -> None:
    """Open the store once and read from it, so a file that is not a tether store (or a
    server that is down) stops ``serve`` before it listens: raises the StoreError."""
    import asyncio

    from tether.ops.store_url import open_store

    async def probe() -> None:
        store = open_store(store_url)
        try:
            await store.approvers.all()
        finally:
            await store.close()

    asyncio.run(probe())


def serve(
    store_url: str, *, host: str = "127.0.0.1", port: int = 8700, app_spec: str | None = None
) -> None:
    """Check the store, then run the server on ``host:port`` until interrupted (uvicorn)."""
    import uvicorn

    from tether.ops.store_url import describe, open_store

    factory = None if app_spec is None else load_factory(app_spec)
    check_store(store_url)  # its own store object: a PostgreSQL pool belongs to one loop
    store = open_store(store_url)
    app = create_app(
        store, app_factory=factory, title=f"tether inbox: {describe(store_url)}", close_store=True
    )
    # uvicorn's access log has method, path and query only: tokens travel in a header
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)
