"""Redaction covers a whole agent tree: what a mask hid in a sub-agent's session (its
``login`` call's password) is masked in every session of the tree, the parent's tool
result and final answer included, in show_session and the exits built on it (the CLI,
the HTTP API, the timeline)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from live_server import get_ok, live_server
from ops_cli import cli
from secret_tree import SECRET, tree

from tether.durable import SQLiteStore
from tether.governance.redaction import show_session, tree_masks
from tether.governance.redaction_tree import load_tree_masks, tree_sessions
from tether.ops.server import create_app
from tether.session import fold


def ran(path: Path, depth: int = 2) -> None:
    store = SQLiteStore(path)
    result = tree(store, "s1", depth=depth)("go")
    assert SECRET in result.text  # the run quotes the password all the way up
    asyncio.run(store.close())


def shown_text(path: Path, session_id: str, *, with_tree: bool) -> str:
    async def go() -> str:
        store = SQLiteStore(path)
        try:
            record = await store.load(session_id)
            assert record is not None
            approvals = await store.approvals.find(session_id=session_id)
            masks = await load_tree_masks(store, session_id) if with_tree else None
            shown = show_session(record, fold(record), approvals, tree=masks)
            return json.dumps([m.to_dict() for m in shown.view.messages])
        finally:
            await store.close()

    return asyncio.run(go())


@pytest.mark.parametrize("depth", [2, 3])
def test_a_childs_masked_secret_is_masked_in_every_session_of_the_tree(
    tmp_path: Path, depth: int
) -> None:
    db = tmp_path / "t.db"
    ran(db, depth)
    assert SECRET in shown_text(db, "s1", with_tree=False)  # the parent alone cannot know
    lead = shown_text(db, "s1", with_tree=True)
    assert SECRET not in lead
    assert "logged in with ***" in lead  # the tool result and the final answer

    async def sessions() -> list[str]:
        store = SQLiteStore(db)
        try:
            child = "s1/ops#1.t1"
            found = await tree_sessions(store, child)  # from a child: up to the root, then down
            return [r.session_id for r, _ in found]
        finally:
            await store.close()

    ids = asyncio.run(sessions())
    assert ids[0] == "s1"
    assert len(ids) == depth
    for sid in ids:
        assert SECRET not in shown_text(db, sid, with_tree=True)


def test_tree_masks_skip_an_unreadable_journal_and_an_empty_tree_masks_nothing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.db"
    ran(db)

    async def go() -> tuple[Any, Any]:
        store = SQLiteStore(db)
        try:
            return await tree_sessions(store, "missing"), await tree_sessions(store, "s1")
        finally:
            await store.close()

    missing, found = asyncio.run(go())
    assert missing == []
    assert tree_masks([]).hidden == set()
    broken = [(found[0][0].__class__(**{**vars_of(found[0][0]), "entries": []}), [])]
    assert tree_masks(broken).hidden == set()
    assert SECRET in tree_masks(found).hidden


def vars_of(record: Any) -> dict[str, Any]:
    from dataclasses import fields

    return {f.name: getattr(record, f.name) for f in fields(record)}


def test_sessions_show_and_timeline_json_mask_the_childs_secret(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    ran(db)
    shown = cli("sessions", "show", "s1", "--store", str(db))
    assert shown.exit_code == 0, shown.output
    assert "logged in with ***" in shown.output
    assert SECRET not in shown.output
    timeline = cli("sessions", "timeline", "s1", "--store", str(db), "--json")
    assert timeline.exit_code == 0, timeline.output
    assert SECRET not in timeline.output
    assert "***" in timeline.output


async def test_the_http_session_view_masks_the_childs_secret(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    await asyncio.to_thread(ran, db)
    store = SQLiteStore(db)
    token = (await store.approvers.add("viewer", ["viewer"])).token
    await store.close()
    with live_server(create_app(SQLiteStore(db), close_store=True)) as url:
        session = await asyncio.to_thread(get_ok, f"{url}/api/sessions/s1", token)
        timeline = await asyncio.to_thread(get_ok, f"{url}/api/timeline/s1", token)
    for body in (session, timeline):
        text = json.dumps(body)
        assert SECRET not in text
        assert "logged in with ***" in text


def test_the_tree_read_is_bounded_in_sessions_and_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tether.governance.redaction_tree as reader

    db = tmp_path / "t.db"
    ran(db, depth=3)

    async def ids() -> list[str]:
        store = SQLiteStore(db)
        try:
            return [r.session_id for r, _ in await tree_sessions(store, "s1")]
        finally:
            await store.close()

    assert len(asyncio.run(ids())) == 3
    monkeypatch.setattr(reader, "MAX_SESSIONS", 2)
    assert asyncio.run(ids()) == ["s1", "s1/ops#1.t1"]
    monkeypatch.setattr(reader, "MAX_SESSIONS", 200)
    monkeypatch.setattr(reader, "MAX_DEPTH", 1)
    assert asyncio.run(ids()) == ["s1", "s1/ops#1.t1"]


def test_a_child_with_a_hashed_session_id_is_found_too(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = SQLiteStore(db)
    tree(store, "s1", lead_call="c" * 300)("go")
    asyncio.run(store.close())

    async def ids() -> list[str]:
        store = SQLiteStore(db)
        try:
            return [r.session_id for r, _ in await tree_sessions(store, "s1")]
        finally:
            await store.close()

    found = asyncio.run(ids())
    assert len(found) == 2
    assert found[1].startswith("sub_")
    assert SECRET not in shown_text(db, "s1", with_tree=True)
