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

import asyncio
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crash_campaign import Run, check_audit, in_doubt_answers, next_run, run_child
from crash_tree_child import FINAL, LINES

from tether.durable import SQLiteStore

CHILD = Path(__file__).parents[1] / "support" / "crash_tree_child.py"

SEED = 1313
LANES = 3
EXTRA_KILL = 0.5  # chance of one more kill, in a recovery run
MAX_RUNS = 10
SESSIONS_PER_TREE = 5  # planner, researcher, three coders


@dataclass
class TreeReport:
    tree: str
    kills: list[tuple[str, str]] = field(default_factory=list)  # (where, detail)
    acked: dict[tuple[str, int], str] = field(default_factory=dict)
    durable: dict[tuple[str, int], str] = field(default_factory=dict)  # committed (printed)
    lost: list[str] = field(default_factory=list)
    unacked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    in_doubt: Counter[str] = field(default_factory=Counter)
    runs: int = 0
    duplicates: int = 0  # side effects that ran more than once
    first_kill: int = 0
    sessions: list[str] = field(default_factory=list)
    final: dict[str, Any] | None = None


Journals = dict[str, tuple[str, int, list[tuple[int, str, dict[str, Any]]]]]


def tree_journals(db: Path, tree: str) -> Journals:
    """{session: (status, version, entries)} of every session of the tree, read fresh."""

    async def read() -> Journals:
        store = SQLiteStore(db)
        try:
            out: Journals = {}
            for summary in await store.list_sessions(limit=10_000):
                sid = summary.session_id
                if sid != tree and not sid.startswith(tree + "/"):
                    continue
                record = await store.load(sid)
                assert record is not None
                entries = await store.read_entries(sid)
                out[sid] = (
                    record.status,
                    record.version,
                    [(e.seq, e.kind, e.data) for e in entries],
                )
            return out
        finally:
            await store.close()

    return asyncio.run(read())


def check_sessions(journals: Journals) -> list[str]:
    """Every session completed; user, (assistant calls, their results)*, final assistant."""
    problems = []
    for sid, (status, _, entries) in sorted(journals.items()):
        if status != "completed":
            problems.append(f"{sid}: status {status}")
        messages = [data["message"] for _, kind, data in entries if kind == "message"]
        roles = [m["role"] for m in messages]
        if not roles or roles[0] != "user" or roles[-1] != "assistant":
            problems.append(f"{sid}: roles {roles}")
            continue
        for ask, answer in zip(messages[1:-1:2], messages[2:-1:2], strict=False):
            calls = sorted(b["id"] for b in ask["content"] if b["type"] == "tool_call")
            results = sorted(
                b["tool_call_id"] for b in answer["content"] if b["type"] == "tool_result"
            )
            if ask["role"] != "assistant" or answer["role"] != "tool" or calls != results:
                problems.append(f"{sid}: calls {calls} answered by {results}")
        if len(roles) % 2 == 1:
            problems.append(f"{sid}: roles {roles}")
    return problems


def answer_in_doubt(
    interrupts: list[dict[str, Any]], journals: Journals, effects: Path, report: TreeReport
) -> dict[str, Any]:
    """The human's job, at the top: skip a write whose line is in the file, else retry."""
    intents = {
        data["call_id"]
        for _, _, entries in journals.values()
        for _, kind, data in entries
        if kind == "tool_intent"
    }
    return in_doubt_answers(
        interrupts, intents, effects, report.problems, report.in_doubt, "/coder#"
    )


def drive(db: Path, index: int, first_target: int, points: int, tmp: Path) -> TreeReport:
    """Run one tree to its end, killed at first_target and maybe once more on recovery."""
    rng = random.Random(SEED * 1000 + index)
    tree = f"t{index:03d}"
    effects = tmp / f"{tree}.effects"
    report = TreeReport(tree)
    mode, answers, target, extra = "start", None, first_target, rng.random() < EXTRA_KILL
    journals: Journals = {}
    while report.runs < MAX_RUNS:
        report.runs += 1
        run: Run = run_child(db, tree, effects, mode, answers, target, child=CHILD)
        journals = tree_journals(db, tree)
        report.acked.update({(sid, seq): kind for sid, seq, kind in run.session_acks})
        report.durable.update({(sid, seq): kind for sid, seq, kind in run.durable})
        for (sid, seq), kind in report.acked.items():
            if report.durable.get((sid, seq)) != kind:
                report.problems.append(f"{sid} seq {seq} ({kind}) acknowledged, never committed")
        for (sid, seq), kind in report.durable.items():
            entries = {s: k for s, k, _ in journals.get(sid, ("missing", 0, []))[2]}
            if entries.get(seq) != kind:
                report.lost.append(f"{sid} seq {seq} ({kind}): now {entries.get(seq)}")
        if run.at is not None:
            # The child's gate: at a kill point no group commit is half done, so every
            # session's journal ends at its last committed (printed) entry; a commit of
            # several sessions' appends may hold entries not yet acknowledged.
            for sid, (_, version, _) in journals.items():
                newest = max((seq for s, seq in report.durable if s == sid), default=0)
                if version != newest:
                    report.unacked.append(f"{sid}: version {version}, committed {newest}, {run.at}")
            report.kills.append((run.at[1], run.at[2]))
            if report.runs == 1:
                report.first_kill = run.at[0]
            if journals.get(tree, ("missing",))[0] == "completed":
                break  # killed after the tree's final append was acknowledged
        step = next_run(
            run,
            report,
            mode,
            journals.get(tree, ("missing", 0, []))[2],
            lambda asked, seen=journals: answer_in_doubt(asked, seen, effects, report),
        )
        if step is None:
            break
        mode, answers = step
        target = 0
        if extra:
            extra = False
            target = rng.randint(1, max(8, points // 2))
    else:
        report.problems.append(f"not done after {MAX_RUNS} runs")
    counts = Counter(effects.read_text().splitlines() if effects.exists() else [])
    report.duplicates = sum(n - 1 for n in counts.values())
    if set(counts) != set(LINES) or any(c != 1 for c in counts.values()):
        report.problems.append(f"effects {sorted(counts.items())}")
    report.sessions = sorted(journals)
    if len(journals) != SESSIONS_PER_TREE:
        report.problems.append(f"sessions {sorted(journals)}")
    report.problems += check_sessions(journals)
    final = [d["message"] for _, k, d in journals.get(tree, ("", 0, []))[2] if k == "message"]
    text = "".join(b.get("text", "") for b in final[-1]["content"]) if final else None
    if text != FINAL:
        report.problems.append(f"top answered {text!r}")
    return report


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
