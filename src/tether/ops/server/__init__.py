"""``tether serve``: the HTTP API and web inbox for approvals, sessions and the audit log.

Needs the ``server`` extra (Starlette and uvicorn): ``pip install -e '.[server]'`` in a checkout.
"""

from __future__ import annotations

from tether.ops.app_loader import load_factory
from tether.ops.server.app import create_app
from tether.ops.server.auth import Policy, default_policy

__all__ = ["Policy", "create_app", "default_policy", "load_factory", "serve"]


def serve(
    store_url: str, *, host: str = "127.0.0.1", port: int = 8700, app_spec: str | None = None
) -> None:
    """Run the server on ``host:port`` until interrupted (uvicorn); a missing SQLite store
    is created (approvers can be added while it runs)."""
    import uvicorn

    from tether.ops.store_url import describe, open_store

    factory = None if app_spec is None else load_factory(app_spec)
    store = open_store(store_url, create=True)
    app = create_app(
        store, app_factory=factory, title=f"tether inbox: {describe(store_url)}", close_store=True
    )
    # uvicorn's access log has method, path and query only: tokens travel in a header
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)
