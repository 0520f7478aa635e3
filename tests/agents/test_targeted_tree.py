"""Targeted resume in a tree (issue 23): answering one of two parallel sub-agents' interrupts
resumes that child only; the other child's session is not touched until it is answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import agent_tree
import pytest

CHILDREN = {
    2: ("tree-1/coder#1.k1", "tree-1/coder#1.k2"),
    3: ("tree-1/researcher#1.p1/coder#1.k1", "tree-1/researcher#1.p1/coder#1.k2"),
}
DONE = {
    2: "planner done: wrote a + wrote b",
    3: "planner done: researcher done: wrote a + wrote b",
}


def _versions(db: str, *sessions: str) -> list[tuple[int, str]]:
    async def look() -> list[tuple[int, str]]:
        store = agent_tree.open_store(db)
        try:
            out = []
            for sid in sessions:
                record = await store.load(sid)
                assert record is not None, sid
                status = {s.session_id: s.status for s in await store.list_sessions()}
                out.append((record.version, status[sid]))
            return out
        finally:
            await store.close()

    return asyncio.run(look())


def _effects(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize("depth", [2, 3])
def test_answering_one_of_two_parallel_children_resumes_that_child_only(
    db: str, tmp_path: Path, depth: int
) -> None:
    effects = tmp_path / "effects.txt"
    first = agent_tree.step(db, effects, "start", depth=depth)
    assert first["stop_reason"] == "interrupt"
    k1, k2 = first["interrupts"]  # in the batch's order
    assert "coder#k1/" in k1["point"]
    assert "coder#k2/" in k2["point"]
    one, two = CHILDREN[depth]
    [(_, status), waiting_before] = _versions(db, one, two)
    assert status == "suspended"

    second = agent_tree.step(db, effects, "resume", json.dumps({k1["id"]: "approve"}), depth=depth)
    assert second["stop_reason"] == "interrupt", second
    assert [i["id"] for i in second["interrupts"]] == [k2["id"]]  # same id, still pending
    assert _effects(effects) == ["a"]
    [(_, status), waiting_after] = _versions(db, one, two)
    assert status == "completed"  # the answered child finished
    assert waiting_after == waiting_before  # the other child's session was not touched

    third = agent_tree.step(db, effects, "resume", json.dumps({k2["id"]: "approve"}), depth=depth)
    assert third["stop_reason"] == "end_turn", third
    assert third["text"] == DONE[depth]
    assert sorted(_effects(effects)) == ["a", "b"]  # each child's write once


def test_in_memory_each_child_runs_when_its_own_question_is_answered(tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    top = agent_tree.build(None, effects, depth=2)
    first = top("plan")
    k1, k2 = first.interrupts
    partial = top.resume({k2.id: "approve"})
    assert partial.interrupts == [k1]
    assert _effects(effects) == ["b"]
    assert "coder#k2" in partial.usage.by_agent
    assert "coder#k1" not in partial.usage.by_agent
    done = top.resume({k1.id: {"approved": False, "reason": "not now"}})
    assert done.stop_reason == "end_turn", done.reason
    assert _effects(effects) == ["b"]
    assert done.text.startswith("planner done: ")
    assert done.text.endswith(" + wrote b")
