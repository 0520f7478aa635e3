"""Crash campaign on a workflow graph: SIGKILL at every journal point of a full run.

The child (tests/support/workflow_crash_child.py) runs a Graph on one SQLite file: plan ->
three agents fired together, each calling the non-idempotent ``write`` -> a fan-in ->
a Loop of an agent (two rounds, a ``write`` each) -> a Swarm (triage hands off to
billing, which calls ``write``). A clean run counts its kill points: for every journal
append of any of its ten sessions, ``commit`` (inside the transaction, before COMMIT)
and ``ack`` (after the append returned), and ``effect`` after each write's side effect.
Then for every point k, a run of its own (a copy of one empty store) is killed at k with
SIGKILL and resumed in fresh processes until the workflow ends (half of them, seeded,
killed once more in their first recovery run, at one of its own points); ``in_doubt``
interrupts are answered as a human checking the effects file would: ``{"skip": ...}``
when the line is there (it ran), ``"retry"`` when it is not. The children are forked
from one process per lane that imported what a run imports (workflow_crash_child.serve):
each is a new process, but starting one costs milliseconds, not an interpreter's start.
The three fans run at once, so the order of their points varies from run to run: k is
the k-th point of the run killed at it.

Checked for every k (crash_campaign.drive_tree): the same final text as the clean run,
each write's line exactly once, every entry committed before the kill (all the
acknowledged ones) still there with the same kind and nothing journaled past it, every
session completed and well formed; then the store's audit chain intact with no
execution of a non-idempotent call recorded twice.
"""

from __future__ import annotations

import random
import shutil
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from crash_campaign import Run, TreeReport, TreeShape, check_audit, drive_tree
from swarm_agents import support_swarm
from workflow_crash_child import FINAL, LINES, Forks

from tether import PersistenceError
from tether.durable import MemoryStore, StoreUnavailable

SEED = 2323
POOL = 2  # serving processes, each running its share of the points' children in turn
EXTRA_KILL = 0.5  # chance of a second kill, in the first recovery run (its own points)
MAX_RUNS = 6
SESSIONS = 10  # the graph, fan_a/b/c, refine and its 2 rounds, support, triage, billing
WHERE = {
    **{fan: f"{fan}#" for fan in ("fan_a", "fan_b", "fan_c")},
    "loop-1": "refine#6/polish#1/",
    "loop-2": "refine#6/polish#2/",
    "swarm-billing": "support#7/billing#2/",
}
"""The part of each in_doubt write's point naming the node that ran it."""
SHAPE = TreeShape(LINES, FINAL, SESSIONS, WHERE)
RERUNS = frozenset({"plan", "fan_a", "fan_b", "fan_c", "join", "refine", "polish", "support"})
RERUNS |= {"triage", "billing", "handoff"}
"""The idempotent calls (nodes, members, functions, the handoff): a recovery runs them
again by design (a node's run resumes its child session); only ``write`` must not."""


def test_sigkill_at_every_journal_point_of_a_workflow_graph(tmp_path: Path) -> None:
    started = time.monotonic()
    template = tmp_path / "template.db"
    check_audit(template, [])  # creates the schema once; each point's store is a copy
    forks = [Forks() for _ in range(POOL)]
    try:
        clean = forks[0].run(
            tmp_path / "clean.db", "wf", tmp_path / "clean.effects", "start", None, 0
        )
        assert clean.result is not None, clean.stderr
        assert clean.result["stop_reason"] == "end_turn"
        assert clean.result["text"] == FINAL
        points = clean.result["points"]
        assert points == 2 * clean.commits + len(LINES)  # (commit, ack) per append, + effects
        assert points >= 40

        outs: list[list[TreeReport]] = [[] for _ in range(POOL)]
        crashed: list[BaseException] = []  # a lane's own failure (a bug in the campaign)

        def lane(n: int) -> None:
            try:
                points_of(n)
            except BaseException as exc:
                crashed.append(exc)

        def points_of(n: int) -> None:
            for k in range(n + 1, points + 1, POOL):
                db, effects = tmp_path / f"k{k:03d}.db", tmp_path / f"k{k:03d}.effects"
                shutil.copyfile(template, db)

                def runner(
                    mode: str, answers: Any, target: int, db: Path = db, effects: Path = effects
                ) -> Run:
                    return forks[n].run(db, "wf", effects, mode, answers, target)

                rng = random.Random(SEED * 1000 + k)
                targets = [k]
                if rng.random() < EXTRA_KILL:
                    targets.append(rng.randint(1, max(8, points // 2)))
                report = drive_tree(runner, db, "wf", effects, targets, SHAPE, max_runs=MAX_RUNS)
                report.problems += check_audit(db, report.sessions, reruns=RERUNS)
                outs[n].append(report)

        threads = [threading.Thread(target=lane, args=(n,)) for n in range(POOL)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if crashed:
            raise crashed[0]
    finally:
        for f in forks:
            f.close()
    reports = sorted((r for out in outs for r in out), key=lambda r: r.first_kill)

    kills = [k for r in reports for k in r.kills]
    lost = [f"k={r.first_kill}: {x}" for r in reports for x in r.lost]
    unacked = [f"k={r.first_kill}: {x}" for r in reports for x in r.unacked]
    problems = [f"k={r.first_kill}: {x}" for r in reports for x in r.problems]
    doubts = sum((r.in_doubt for r in reports), Counter())
    duplicates = sum(r.duplicates for r in reports)
    print(
        f"\nworkflow crash campaign: {points} kill points per full run, {len(kills)} kills, "
        f"{sum(r.runs for r in reports)} child runs, {time.monotonic() - started:.1f} s\n"
        f"kills by point: {dict(sorted(Counter(w for w, _ in kills).items()))}\n"
        f"in_doubt answers: {dict(doubts)}; duplicated side effects: {duplicates}; "
        f"lost committed entries: {len(lost)}; uncommitted entries surviving: {len(unacked)}"
    )
    assert lost == [], "\n".join(lost)
    assert unacked == [], "\n".join(unacked)
    assert problems == [], "\n".join(problems)
    assert duplicates == 0
    assert [r.first_kill for r in reports] == list(range(1, points + 1))  # every point, once
    assert len(kills) >= points


class LosesTheFirstNodeResult(MemoryStore):
    """A MemoryStore whose append of session ``parent``'s first tool message (a node's
    result) fails once: that node's child session has ended, its parent never heard."""

    def __init__(self, parent: str) -> None:
        super().__init__()
        self.parent, self.failed = parent, False

    async def append(self, session_id: str, expected_version: int, entries: Any, **kw: Any) -> Any:
        tool = any(k == "message" and d["message"]["role"] == "tool" for k, d in entries)
        if session_id == self.parent and tool and not self.failed:
            self.failed = True
            raise StoreUnavailable("the database went away (injected)")
        return await super().append(session_id, expected_version, entries, **kw)


async def test_a_handoff_whose_record_the_swarm_lost_hands_off_again_on_resume(
    tmp_path: Path,
) -> None:
    # Found by the campaign (killed after triage's session ended with its handoff, before
    # the swarm saved that result): the resumed swarm failed with "sub-agent session ...
    # ended without an answer" instead of running billing.
    store, effects = LosesTheFirstNodeResult("swarm-1"), tmp_path / "effects"
    with pytest.raises(PersistenceError, match="went away"):
        await support_swarm(store, effects).invoke_async("I want my money back")
    triage = await store.load("swarm-1/triage#1.1")
    assert triage is not None
    assert triage.status == "completed"  # it handed off and ended; the swarm has no record
    asked = await support_swarm(store, effects).resume_async()
    assert asked.stop_reason == "interrupt", asked.reason
    [pending] = asked.interrupts
    assert pending.name == "billing#2/confirm:ConfirmRefunds"
    done = await support_swarm(store, effects).resume_async({pending.id: "approve"})
    assert done.stop_reason == "end_turn"
    assert done.text == "billing: refunded 30 (2 tools)"
    assert effects.read_text() == "refund 30\n"


async def test_a_node_stopped_by_its_limit_whose_record_was_lost_stops_the_workflow_again() -> None:
    # Without the stop reason in the child's journal, the resumed workflow read "ended
    # without an answer" and failed (RunError) where the first run stopped (limit_turns).
    from tether import Agent, Limits, tool
    from tether.models import ScriptedModel
    from tether.workflows import Sequential

    @tool
    def look() -> str:
        """Look around (safe to repeat)."""
        return "nothing yet"

    def build(store: MemoryStore) -> Sequential:
        busy = ScriptedModel(lambda m, s: {"tool_calls": [{"name": "look", "args": {}}]})
        agent = Agent(busy, tools=[look], name="busy", limits=Limits(turns=1))
        return Sequential(agent, store=store, session_id="wf-l")

    clean = await build(MemoryStore()).invoke_async("go")
    assert clean.stop_reason == "limit_turns"
    store = LosesTheFirstNodeResult("wf-l")
    with pytest.raises(PersistenceError):
        await build(store).invoke_async("go")
    node = await store.load("wf-l/busy#1.1")
    assert node is not None
    assert node.status == "completed"
    again = await build(store).resume_async()
    assert (again.stop_reason, again.reason) == (clean.stop_reason, clean.reason)
    assert again.reason is not None
    assert "busy#1" in again.reason
