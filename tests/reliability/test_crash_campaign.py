"""Crash campaign: SIGKILL a durable session at every step boundary, resume it, check the world.

A child process (tests/support/crash_child.py) runs a scripted session with a
non-idempotent tool that appends a line to a file: four model turns with tool calls
(one of them a parallel batch of three), state changes, then a final answer. It stops
at a chosen *kill point* (inside an append's transaction before COMMIT, right after an
append was acknowledged, or right after the tool's side effect) and the parent kills
it with SIGKILL. The session is then resumed in fresh processes (which may be killed
again) until it ends; ``in_doubt`` interrupts are answered like a human would: skip
when the line is in the file, retry when it is not.

Checked: every logical line written exactly once, every entry the child reported as
acknowledged still there with the same kind (and nothing unacknowledged), a
well-formed conversation, every session completed; and the audit records (which
commit with the journal's appends): an intact chain, no tool execution recorded
twice, one for every result the tool produced in the final conversation. Seeded; the kill points of the
first runs cover every boundary of a full run.
"""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.durable import SQLiteStore

CHILD = Path(__file__).parents[1] / "support" / "crash_child.py"
sys.path.insert(0, str(CHILD.parent))
from crash_campaign import (  # noqa: E402
    check_audit,
    in_doubt_answers,
    next_run,
    run_child,
)
from crash_child import LINES, SCRIPT  # noqa: E402

SEED = 1303
LANES = 3  # sessions run in parallel lanes, each lane on its own SQLite file
SESSIONS = 72
EXTRA_KILLS = 2  # kills allowed per session after the first, in recovery runs
MAX_RUNS = 16


@dataclass
class Report:
    session: str
    kills: list[tuple[str, str, str]] = field(default_factory=list)  # (where, detail, last kind)
    acked: dict[int, str] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    unacked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    in_doubt: Counter[str] = field(default_factory=Counter)
    runs: int = 0
    first_kill: int = 0
    final: dict[str, Any] | None = None


def journal(db: Path, session: str) -> tuple[str, int, list[tuple[int, str, dict[str, Any]]]]:
    """(status, version, entries) read through a fresh store object."""

    async def read() -> tuple[str, int, list[tuple[int, str, dict[str, Any]]]]:
        store = SQLiteStore(db)
        try:
            record = await store.load(session)
            if record is None:
                return "missing", 0, []
            entries = await store.read_entries(session)
            return record.status, record.version, [(e.seq, e.kind, e.data) for e in entries]
        finally:
            await store.close()

    return asyncio.run(read())


def check_conversation(messages: list[dict[str, Any]]) -> str | None:
    """user, (assistant with calls, tool results for exactly those calls)*, final assistant."""
    roles = [m["role"] for m in messages]
    expected = ["user"] + ["assistant", "tool"] * len(SCRIPT) + ["assistant"]
    if roles != expected:
        return f"roles {roles}"
    for ask, answer in zip(messages[1:-1:2], messages[2:-1:2], strict=True):
        calls = [b["id"] for b in ask["content"] if b["type"] == "tool_call"]
        results = [b["tool_call_id"] for b in answer["content"] if b["type"] == "tool_result"]
        if sorted(calls) != sorted(results):
            return f"calls {calls} answered by {results}"
    return None


def drive(lane_db: Path, index: int, first_target: int, points: int, tmp: Path) -> Report:
    """Run one session to its end, killing it at first_target and then at random points."""
    rng = random.Random(SEED * 1000 + index)
    session = f"s{index:03d}"
    effects = tmp / f"{session}.effects"
    report = Report(session)
    mode, answers, target, kills_left = "start", None, first_target, EXTRA_KILLS
    while report.runs < MAX_RUNS:
        report.runs += 1
        run = run_child(lane_db, session, effects, mode, answers, target)
        status, version, entries = journal(lane_db, session)
        kinds = {seq: kind for seq, kind, _ in entries}
        report.acked.update(dict(run.acks))
        report.lost += [
            f"seq {s} ({k}): now {kinds.get(s)}"
            for s, k in report.acked.items()
            if kinds.get(s) != k
        ]
        newest = max(report.acked, default=0)
        # Killed at a commit or ack point, the loop thread was blocked there: the journal
        # must end at the last acknowledged entry (a COMMIT that never ran left nothing).
        # (Killed at an effect point, the loop may be inside an append in another thread.)
        if run.at is not None and run.at[1] != "effect" and version != newest:
            report.unacked.append(f"version {version}, last acknowledged {newest}, {run.at}")
        if run.at is not None:
            last = entries[-1][1] if entries else "none"
            report.kills.append((run.at[1], run.at[2], last))
            if report.runs == 1:
                report.first_kill = run.at[0]
            if status == "completed":
                break  # killed after the final append was acknowledged
        step = next_run(
            run,
            report,
            mode,
            entries,
            lambda asked, seen=entries: answer_in_doubt(asked, seen, effects, report),
        )
        if step is None:
            break
        mode, answers = step
        target = 0
        if kills_left and rng.random() < 0.75:
            kills_left -= 1
            # half early (a recovery's own boundaries: in_doubt raised, answers, status),
            # half anywhere in what is left of the run
            early = rng.random() < 0.5
            target = rng.randint(1, 8 if early else max(8, points - 2 * version))
    lines = effects.read_text().splitlines() if effects.exists() else []
    counts = Counter(lines)
    if set(counts) != set(LINES) or any(c != 1 for c in counts.values()):
        report.problems.append(f"effects {sorted(counts.items())}")
    status, _, _ = journal(lane_db, session)
    if status != "completed":
        report.problems.append(f"session ended with status {status}")
    if report.final is None:
        report.final = final_view(lane_db, session)
    problem = check_conversation(report.final["messages"]) if report.final else "no result"
    if problem:
        report.problems.append(f"conversation: {problem}")
    return report


def final_view(db: Path, session: str) -> dict[str, Any] | None:
    """The conversation of a session that completed while its process was being killed."""
    _, _, entries = journal(db, session)
    messages = [data["message"] for _, kind, data in entries if kind == "message"]
    return {"messages": messages}


def answer_in_doubt(
    interrupts: list[dict[str, Any]],
    entries: list[tuple[int, str, dict[str, Any]]],
    effects: Path,
    report: Report,
) -> dict[str, Any]:
    """The human's job: for each in_doubt call, look in the file; skip if done, else retry."""
    intents = {data["call_id"] for _, kind, data in entries if kind == "tool_intent"}
    return in_doubt_answers(interrupts, intents, effects, report.problems, report.in_doubt)


def test_sigkill_at_every_step_boundary_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    started = time.monotonic()
    calibration = run_child(
        tmp_path / "calib.db", "calib", tmp_path / "calib.effects", "start", None, 0
    )
    assert calibration.result is not None, calibration.stderr
    assert calibration.result["stop_reason"] == "end_turn"
    points = calibration.result["points"]
    assert points == 2 * calibration.commits + len(LINES)  # (commit, ack) per append

    rng = random.Random(SEED)
    deck = list(range(1, points + 1))
    rng.shuffle(deck)
    deck += [rng.randint(1, points) for _ in range(SESSIONS - len(deck))]
    assert len(deck) >= SESSIONS

    def lane(number: int) -> list[Report]:
        db = tmp_path / f"lane{number}.db"
        return [drive(db, i, deck[i], points, tmp_path) for i in range(number, SESSIONS, LANES)]

    reports: list[Report] = []
    threads_out: list[list[Report]] = [[] for _ in range(LANES)]
    threads = [
        threading.Thread(target=lambda n=n: threads_out[n].extend(lane(n))) for n in range(LANES)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in threads_out:
        reports.extend(out)

    kills = [k for r in reports for k in r.kills]
    by_kind = Counter(last for _, _, last in kills)
    by_point = Counter(f"{where}:{detail}" for where, detail, _ in kills)
    lost = [f"{r.session}: {x}" for r in reports for x in r.lost]
    unacked = [f"{r.session}: {x}" for r in reports for x in r.unacked]
    problems = [f"{r.session}: {x}" for r in reports for x in r.problems]
    doubts = sum((r.in_doubt for r in reports), Counter())
    print(
        f"\ncrash campaign: {len(reports)} sessions, {sum(r.runs for r in reports)} child runs, "
        f"{len(kills)} kills, {points} kill points per full run, "
        f"{time.monotonic() - started:.1f} s\n"
        f"kills by last journal entry kind: {dict(sorted(by_kind.items()))}\n"
        f"kills by point: {dict(sorted(by_point.items()))}\n"
        f"in_doubt answers: {dict(doubts)}; lost acknowledged entries: {len(lost)}; "
        f"unacknowledged entries surviving: {len(unacked)}"
    )
    assert len(reports) == SESSIONS
    assert lost == []
    assert unacked == []
    assert problems == [], "\n".join(problems)
    audit = [
        p
        for n in range(LANES)
        for p in check_audit(tmp_path / f"lane{n}.db", [r.session for r in threads_out[n]])
    ]
    assert audit == [], "\n".join(audit)
    assert len(kills) >= 100
    assert {r.first_kill for r in reports} >= set(range(1, points + 1))  # every boundary
