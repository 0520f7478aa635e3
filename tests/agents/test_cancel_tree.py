"""A cancel ends every running child session of the tree ``cancelled`` in the store, at
every depth (a sub-agent's and a workflow node's), journaled as a cancelled top-level
run's end is; the timeline shows them ended; resuming the top afterwards is refused as
for any session that is not suspended, and changes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from crash_campaign import run_child, tree_journals

from tether import Agent, SessionStateError, tool
from tether.agents import as_tool
from tether.durable import Store
from tether.models import ScriptedModel
from tether.ops.timeline import read_timeline, timeline_of
from tether.workflows import Parallel, Sequential


def _calling(name: str, args: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(lambda m, s: {"tool_calls": [{"name": name, "args": args}]})


def _waiter(name: str, waiting: list[str], started: asyncio.Event, count: int) -> Agent:
    """An agent whose one tool waits until it is cancelled (``started`` once ``count``
    such tools of the test are waiting)."""

    @tool
    async def wait_long() -> str:
        """Wait."""
        waiting.append(name)
        if len(waiting) == count:
            started.set()
        await asyncio.sleep(30)
        return "waited"

    return Agent(_calling("wait_long", {}), tools=[wait_long], name=name)


async def _statuses(store: Store) -> dict[str, str]:
    return {s.session_id: s.status for s in await store.list_sessions()}


async def _versions(store: Store) -> dict[str, int]:
    return {s.session_id: s.version for s in await store.list_sessions()}


async def _cancelled_end(store: Store, session_id: str) -> None:
    """The session's journal ends as a cancelled top-level run's does: usage, then the
    status entry with the stop reason; every tool call it made has a result."""
    *_, usage, status = await store.read_entries(session_id, 0)
    assert usage.kind == "usage"
    assert status.kind == "status"
    assert status.data["status"] == "cancelled"
    assert status.data["stop_reason"] == "cancelled"
    assert status.data["reason"]
    from tether.session import fold

    record = await store.load(session_id)
    assert record is not None
    view = fold(record)
    assert view.pending is None  # no open batch: every call answered
    assert view.stop_reason == "cancelled"
    called = {c.id for m in view.messages for c in m.tool_calls}
    results = [r for m in view.messages for r in m.tool_results]
    assert called
    assert called == {r.tool_call_id for r in results}
    assert {r.status for r in results} == {"cancelled"}


def _ends(shown: dict[str, Any]) -> dict[str, str]:
    """The ``end`` row of each session in the timeline, by session id."""
    return {s["session_id"]: s["status"] for s in shown["steps"] if s["kind"] == "end"}


async def _cancel_when(started: asyncio.Event, cancel: Callable[[], None]) -> None:
    await asyncio.wait_for(started.wait(), 10)
    # from another thread, as a signal handler or a server's cancel endpoint would
    await asyncio.to_thread(cancel)


async def test_a_cancelled_two_deep_tree_ends_every_child_session_cancelled(
    stores: Callable[[], Store],
) -> None:
    waiting: list[str] = []
    started = asyncio.Event()
    leaf = _waiter("leaf", waiting, started, 1)
    mid = Agent(_calling("leaf", {"task": "t"}), tools=[as_tool(leaf, name="leaf")], name="mid")
    top = Agent(
        _calling("mid", {"task": "t"}),
        tools=[as_tool(mid, name="mid")],
        store=stores(),
        session_id="top",
    )
    running = asyncio.create_task(top.invoke_async("go"))
    await _cancel_when(started, top.cancel)
    result = await asyncio.wait_for(running, 10)
    assert result.stop_reason == "cancelled"

    store = stores()  # a new store object, as another process reads the tree
    statuses = await _statuses(store)
    assert len(statuses) == 3  # the top, mid's child session, leaf's grandchild session
    assert set(statuses.values()) == {"cancelled"}, statuses
    for session_id in statuses:
        await _cancelled_end(store, session_id)

    data = await read_timeline(store, "top")
    assert data is not None
    shown = timeline_of(data)
    assert _ends(shown) == dict.fromkeys(statuses, "cancelled")
    [call] = [s for s in shown["steps"] if s["kind"] == "tool" and s["title"] == "mid"]
    assert call["detail"]["child_session"]["status"] == "cancelled"

    # a cancelled session is not suspended: resume() is refused and nothing is written
    before = await _versions(store)
    again = Agent(
        _calling("mid", {"task": "t"}),
        tools=[as_tool(mid, name="mid")],
        store=store,
        session_id="top",
    )
    with pytest.raises(SessionStateError, match="not suspended: there is nothing to resume"):
        await again.resume_async()
    assert await _versions(store) == before
    assert await _statuses(store) == statuses


async def test_a_parallel_workflow_cancelled_from_another_thread_ends_every_node_cancelled(
    stores: Callable[[], Store],
) -> None:
    waiting: list[str] = []
    started = asyncio.Event()
    wf = Parallel(
        _waiter("a", waiting, started, 3),
        Sequential(_waiter("b", waiting, started, 3), name="inner"),  # a node two deep
        _waiter("c", waiting, started, 3),
        store=stores(),
        session_id="wf-cancel",
    )
    running = asyncio.create_task(wf.invoke_async("go"))
    await _cancel_when(started, wf.cancel)
    result = await asyncio.wait_for(running, 10)
    assert result.stop_reason == "cancelled"
    assert sorted(waiting) == ["a", "b", "c"]

    store = stores()
    statuses = await _statuses(store)
    # the workflow, its three nodes' sessions and the inner workflow's node's
    assert len(statuses) == 5, statuses
    assert set(statuses.values()) == {"cancelled"}, statuses
    for session_id in statuses:
        if session_id != "wf-cancel":
            await _cancelled_end(store, session_id)

    data = await read_timeline(store, "wf-cancel")
    assert data is not None
    assert _ends(timeline_of(data)) == dict.fromkeys(statuses, "cancelled")

    before = await _versions(store)
    with pytest.raises(SessionStateError, match="not suspended"):
        await wf.resume_async()
    assert await _versions(store) == before


CANCEL_CHILD = Path(__file__).parents[1] / "support" / "crash_cancel_child.py"


def test_a_crash_at_any_point_of_a_cancel_loses_no_acknowledged_entry(tmp_path: Path) -> None:
    """SIGKILL at every journal point of the cancel path of a two-deep tree (the leaf's
    tool cancels the top): every acknowledged entry of every session is in the store,
    nothing that was not committed is; a recovery in a new process ends every session
    (none stays ``running``)."""
    full = run_child(tmp_path / "full.db", "top", tmp_path / "full", "start", None, 0, CANCEL_CHILD)
    assert full.result is not None, full.stderr
    assert full.result["stop_reason"] == "cancelled"
    statuses = {s for s, _, _ in tree_journals(tmp_path / "full.db", "top").values()}
    assert statuses == {"cancelled"}
    first = int((tmp_path / "full").read_text().split()[0]) + 1  # the cancel's first point
    last = full.result["points"]
    assert last - first >= 10  # every child's end, then the top's: many points to kill at
    for target in range(first, last + 1):
        db, effects = tmp_path / f"k{target}.db", tmp_path / f"k{target}"
        killed = run_child(db, "top", effects, "start", None, target, CANCEL_CHILD)
        assert killed.at is not None, killed.stderr
        assert killed.at[0] == target
        held = {
            (sid, seq, kind)
            for sid, (_, _, entries) in tree_journals(db, "top").items()
            for seq, kind, _ in entries
        }
        assert set(killed.session_acks) <= held, target  # no acknowledged entry lost
        assert held <= set(killed.durable), target  # and nothing beyond the commits
        again = run_child(db, "top", effects, "resume", None, 0, CANCEL_CHILD)
        after = tree_journals(db, "top")
        if after["top"][0] == "cancelled" and again.result is None:  # killed after its end
            assert "top is not suspended: there is nothing to resume" in again.stderr
            assert {s for s, _, _ in after.values()} == {"cancelled"}
        else:
            assert again.result is not None, again.stderr
        assert "running" not in {s for s, _, _ in after.values()}, (target, after.keys())
        kept = {(sid, seq, kind) for sid, (_, _, es) in after.items() for seq, kind, _ in es}
        assert held <= kept, target
