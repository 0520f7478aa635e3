"""Crash campaign on a three-level agent tree: SIGKILL at every durability point, resume elsewhere.

The child process (tests/support/crash_tree_child.py) runs planner -> researcher ->
coders, the coders calling a non-idempotent ``write``; every session of the tree lives
in one SQLite file. It is killed at a chosen point (inside any session's append before
COMMIT, right after an append was acknowledged, right after a write's side effect),
then resumed from the top in fresh processes (which may be killed again) until the
tree ends. ``in_doubt`` interrupts (lifted from a coder to the top) are answered like a
human would: skip when the line is in the file, retry when it is not.

Checked, per tree: every line written exactly once (at most once by the runtime, and
the human's answers complete it), every entry committed in any session (printed by the
child's store right after its group commit; every acknowledged entry is one) still
there with the same kind, no session journaled past its last committed entry, every
session completed with a well-formed conversation, the top's answer built from every
coder's; and the lane's audit chain intact with no tool execution recorded twice. The
first kill of each tree is a different point, so together they cover every point of a
full run. (Same machinery as test_crash_campaign.py.)
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from crash_campaign import Run, TreeReport, TreeShape, check_audit, drive_tree, run_child
from crash_tree_child import FINAL, LINES

CHILD = Path(__file__).parents[1] / "support" / "crash_tree_child.py"

SEED = 1313
LANES = 3
EXTRA_KILL = 0.5  # chance of one more kill, in a recovery run
MAX_RUNS = 10
SESSIONS_PER_TREE = 5  # planner, researcher, three coders


def drive(db: Path, index: int, first_target: int, points: int, tmp: Path) -> TreeReport:
    """Run one tree to its end, killed at first_target and maybe once more on recovery."""
    rng = random.Random(SEED * 1000 + index)
    tree = f"t{index:03d}"
    effects = tmp / f"{tree}.effects"
    targets = [first_target]
    if rng.random() < EXTRA_KILL:
        targets.append(rng.randint(1, max(8, points // 2)))

    def runner(mode: str, answers: Any, target: int) -> Run:
        return run_child(db, tree, effects, mode, answers, target, child=CHILD)

    shape = TreeShape(LINES, FINAL, SESSIONS_PER_TREE, "/coder#")
    return drive_tree(runner, db, tree, effects, targets, shape, max_runs=MAX_RUNS)


def test_sigkill_anywhere_in_a_three_level_tree_repeats_no_side_effect(tmp_path: Path) -> None:
    started = time.monotonic()
    calibration = run_child(
        tmp_path / "calib.db", "calib", tmp_path / "calib.effects", "start", None, 0, child=CHILD
    )
    assert calibration.result is not None, calibration.stderr
    assert calibration.result["text"] == FINAL
    points = calibration.result["points"]
    assert points == 2 * calibration.commits + len(LINES)  # (commit, ack) per append

    deck = list(range(1, points + 1))  # every point is some tree's first kill
    random.Random(SEED).shuffle(deck)

    outs: list[list[TreeReport]] = [[] for _ in range(LANES)]

    def lane(n: int) -> None:
        db = tmp_path / f"lane{n}.db"
        outs[n].extend(drive(db, i, deck[i], points, tmp_path) for i in range(n, points, LANES))

    threads = [threading.Thread(target=lane, args=(n,)) for n in range(LANES)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reports = [r for out in outs for r in out]

    kills = [k for r in reports for k in r.kills]
    lost = [f"{r.tree}: {x}" for r in reports for x in r.lost]
    unacked = [f"{r.tree}: {x}" for r in reports for x in r.unacked]
    problems = [f"{r.tree}: {x}" for r in reports for x in r.problems]
    doubts = sum((r.in_doubt for r in reports), Counter())
    duplicates = sum(r.duplicates for r in reports)
    print(
        f"\ntree crash campaign: {len(reports)} trees x {SESSIONS_PER_TREE} sessions, "
        f"{sum(r.runs for r in reports)} child runs, {len(kills)} kills, {points} kill points "
        f"per full run, {time.monotonic() - started:.1f} s\n"
        f"kills by point: {dict(sorted(Counter(w for w, _ in kills).items()))}\n"
        f"in_doubt answers: {dict(doubts)}; duplicated side effects: {duplicates}; "
        f"lost committed entries: {len(lost)}; uncommitted entries surviving: "
        f"{len(unacked)}"
    )
    assert lost == [], "\n".join(lost)
    assert unacked == [], "\n".join(unacked)
    assert problems == [], "\n".join(problems)
    assert duplicates == 0
    audit = [
        p
        for n in range(LANES)
        for p in check_audit(
            tmp_path / f"lane{n}.db",
            [s for r in outs[n] for s in r.sessions],
            reruns=frozenset({"researcher", "coder"}),  # sub-agent calls: idempotent
        )
    ]
    assert audit == [], "\n".join(audit)
    assert {r.first_kill for r in reports} == set(range(1, points + 1))  # every point
