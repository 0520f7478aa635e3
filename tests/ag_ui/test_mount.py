"""``POST /ag-ui`` is mounted with an ``--app`` factory, and only when the extra is there."""

from __future__ import annotations

import sys

from ag_ui_app import factory

from tether.durable import MemoryStore
from tether.ops.server import create_app


def _paths(app) -> set[str]:
    return {route.path for route in app.routes}


def test_the_endpoint_comes_with_the_app_factory():
    store = MemoryStore()
    assert "/ag-ui" in _paths(create_app(store, app_factory=factory(store, [])))
    assert "/ag-ui" not in _paths(create_app(store))


def test_without_the_ag_ui_extra_the_server_still_starts(monkeypatch):
    for name in [
        m for m in sys.modules if m == "ag_ui" or m.startswith(("ag_ui.", "tether.ag_ui"))
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ag_ui", None)  # import ag_ui raises ImportError
    store = MemoryStore()
    app = create_app(store, app_factory=factory(store, []))
    assert "/ag-ui" not in _paths(app)
    assert "/api/approvals" in _paths(app)
