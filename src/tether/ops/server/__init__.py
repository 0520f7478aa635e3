"""``tether serve``: the HTTP API and web inbox for approvals, sessions and the audit log.

Needs the ``server`` extra (Starlette and uvicorn): ``pip install -e '.[server]'`` in a checkout.
"""

from __future__ import annotations

from tether.ops.app_loader import load_factory
from tether.ops.server.app import create_app
from tether.ops.server.auth import Policy, default_policy

__all__ = ["Policy", "check_store", "create_app", "default_policy", "load_factory", "serve"]


def check_store(store_url: str) -> None:
    """Open the store once (a missing SQLite file is created) and read from it, so a file
    that is not a tether store (or a server that is down) stops ``serve`` before it
    listens: raises the StoreError."""
    import asyncio

    from tether.ops.store_url import open_store

    async def probe() -> None:
        store = open_store(store_url, create=True)
        try:
            await store.approvers.all()
        finally:
            await store.close()

    asyncio.run(probe())


def serve(
    store_url: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8700,
    app_spec: str | None = None,
    public_url: str | None = None,
    a2a_skills: str | None = None,
) -> None:
    """Check the store (creating a missing SQLite file: approvers can be added while it
    runs), then run the server on ``host:port`` until interrupted (uvicorn)."""
    import uvicorn

    from tether.ops.store_url import describe, open_store

    factory = None if app_spec is None else load_factory(app_spec)
    skills = None
    if a2a_skills is not None:
        from tether.a2a.skills import load_skills

        skills = load_skills(a2a_skills)
    check_store(store_url)  # its own store object: a PostgreSQL pool belongs to one loop
    store = open_store(store_url)
    app = create_app(
        store,
        app_factory=factory,
        title=f"tether inbox: {describe(store_url)}",
        close_store=True,
        public_url=public_url,
        a2a_skills=skills,
    )
    # uvicorn's access log has method, path and query only: tokens travel in a header
    uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=False)
