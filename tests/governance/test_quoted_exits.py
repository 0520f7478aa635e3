"""Every exit of a workflow whose second node's task quotes a secret the first node's
mask hid shows it nowhere, and still shows a value that is not hidden: ``sessions show``
(each session of the tree), ``sessions export``, ``sessions timeline``, ``approvals``,
and the HTTP session view, timeline and approvals (tests/support/quoting_tree.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import quote

from live_server import get_ok, live_server
from ops_cli import cli
from quoting_tree import CARD, PLAIN, flow, make_flow

from tether.durable import SQLiteStore
from tether.ops.server import create_app

APP = "quoting_tree:make_flow"


def suspended(db: Path) -> list[str]:
    """Run the flow into its Confirm of ``send``; the ids of the tree's sessions."""

    async def go() -> list[str]:
        store = SQLiteStore(db)
        try:
            result = await flow(store, "wf").invoke_async("go")
            assert result.stop_reason == "interrupt"
            page = await store.session_page(search="wf", limit=10)
            return sorted(s.session_id for s in page.sessions)
        finally:
            await store.close()

    return asyncio.run(go())


def test_the_cli_exits_scrub_the_quoted_secret(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    ids = suspended(db)
    assert len(ids) == 3
    store = str(db)
    outputs = []
    for sid in ids:
        for args in (
            ("sessions", "show", sid),
            ("sessions", "show", sid, "--json"),
            ("sessions", "export", sid),
            ("sessions", "timeline", sid, "--json"),
        ):
            done = cli(*args, "--store", store, "--app", APP)
            assert done.exit_code == 0, done.output
            assert CARD not in done.output, args
            outputs.append(done.output)
    listed = cli("approvals", "list", "--store", store, "--wide")
    assert listed.exit_code == 0, listed.output
    [row_id] = [w for w in listed.output.split() if w.startswith("apr_")]
    shown = cli("approvals", "show", row_id, "--store", store, "--json")
    assert shown.exit_code == 0, shown.output
    for done in (listed, shown):
        assert CARD not in done.output
    assert PLAIN in shown.output
    assert json.loads(shown.output)["arguments"]["text"] == f"paid: charged *** for {PLAIN}"
    assert all(PLAIN in out for out in outputs[:4])  # the workflow's session: the task shows


async def test_the_http_exits_scrub_the_quoted_secret(tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    ids = await asyncio.to_thread(suspended, db)
    store = SQLiteStore(db)
    token = (await store.approvers.add("admin", ["admin"])).token
    await store.close()
    app = create_app(SQLiteStore(db), app_factory=make_flow, close_store=True)
    with live_server(app) as url:
        bodies = [await asyncio.to_thread(get_ok, f"{url}/api/approvals", token)]
        for sid in ids:
            for path in ("sessions", "timeline"):
                where = f"{url}/api/{path}/{quote(sid, safe='')}"
                bodies.append(await asyncio.to_thread(get_ok, where, token))
    for body in bodies:
        assert CARD not in json.dumps(body)
    assert PLAIN in json.dumps(bodies[0])
    assert all(PLAIN in json.dumps(b) for b in bodies[1:3])  # the workflow's own views
