"""Targeted resume in a tree (issue 23): answering one of two parallel sub-agents' interrupts
resumes that child only; the other child's session is not touched until it is answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import agent_tree
import pytest

from tether.control import BeforeToolCall, InterventionHandler
from tether.journal_fold import fold
from tether.ops.worker import Worker, WorkerConfig

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


class HoldWrite(InterventionHandler):
    """Holds the ``write`` of ``text`` (inside the child, after its Confirm was answered)
    until ``release`` is set."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.inside = asyncio.Event()
        self.release = asyncio.Event()

    async def before_tool_call(self, event: BeforeToolCall) -> None:
        if event.tool_call.name == "write" and event.tool_call.arguments["text"] == self.text:
            self.inside.set()
            await self.release.wait()


@pytest.mark.parametrize("depth", [2, 3])
async def test_a_decision_made_while_one_child_resumes_is_kept_and_a_worker_finishes(
    db: str, tmp_path: Path, depth: int
) -> None:
    """k2's row is decided in the inbox while the resume that answered k1 runs inside k1's
    child: the tree re-suspends on k2 with k2's one row, the top session ends ``ready``,
    and a worker resumes the tree with the inbox's decision."""
    effects = tmp_path / "effects.txt"
    first = await agent_tree.build(db, effects, depth=depth).invoke_async("plan")
    k1, k2 = first.interrupts
    inbox = agent_tree.open_store(db)
    try:
        rows = {a.interrupt_id: a for a in await inbox.approvals.pending(session_id="tree-1")}
        hold = HoldWrite("a")
        agent = agent_tree.build(db, effects, depth=depth, policies=(hold,))
        resuming = asyncio.create_task(agent.resume_async({k1.id: "approve"}))
        await asyncio.wait_for(hold.inside.wait(), 30)
        await inbox.approvals.decide(rows[k2.id].id, "approve", decided_by="alice")
        hold.release.set()
        partial = await asyncio.wait_for(resuming, 30)
        agent.close()
        assert [i.id for i in partial.interrupts] == [k2.id]
        assert _effects(effects) == ["a"]
        found = await inbox.approvals.find(session_id="tree-1")
        assert sorted((a.interrupt_id, a.id, a.status) for a in found) == sorted(
            (iid, row.id, "approved") for iid, row in rows.items()
        )  # one row per interrupt, k2's the one alice decided
        status = {s.session_id: s.status for s in await inbox.list_sessions()}
        assert status["tree-1"] == "ready"

        config = WorkerConfig(poll=0.05, listen=False)
        factory = lambda session_id: agent_tree.build(db, effects, depth=depth)  # noqa: E731
        done = await Worker(inbox, factory, config).run(once=True)
        assert [(o.session_id, o.outcome) for o in done] == [("tree-1", "completed")]
        assert _effects(effects) == ["a", "b"]
        record = await inbox.load("tree-1")
        assert record is not None
        assert fold(record).messages[-1].text == DONE[depth]
    finally:
        await inbox.close()
