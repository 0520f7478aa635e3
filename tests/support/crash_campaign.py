"""What the crash campaigns (tests/reliability, tests/workflows) share: run a child that
may be killed at a point (``run_child``; ``read_run`` reads its stdout however it was
started), drive a tree of sessions through kills and recoveries to its end
(``drive_tree``), and check the journals and a lane's audit records.

A child prints ``DURABLE <seq> <kind> <session>`` per committed entry (right after its
group commit), ``ACK <seq> <kind> <session>`` per acknowledged entry, ``COMMITTED <n>``
per append, ``AT <point> <where> <detail>`` when it reaches its kill point (it is then
killed with SIGKILL) and ``RESULT <json>`` at its end (tests/support/crash_child.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.durable import SQLiteStore
from tether.workflows.swarm import HANDOFF_MARK

CHILD = Path(__file__).parent / "crash_child.py"
CHILD_TIMEOUT = 60.0


@dataclass
class Run:
    acks: list[tuple[int, str]] = field(default_factory=list)
    session_acks: list[tuple[str, int, str]] = field(default_factory=list)  # (session, seq, kind)
    durable: list[tuple[str, int, str]] = field(default_factory=list)  # committed, same shape
    commits: int = 0  # appends acknowledged (one commit may carry several entries)
    at: tuple[int, str, str] | None = None  # (point, where, detail) when killed
    result: dict[str, Any] | None = None
    returncode: int = 0
    stderr: str = ""


def run_child(
    db: Path, session: str, effects: Path, mode: str, answers: Any, target: int, child: Path = CHILD
) -> Run:
    args = [sys.executable, str(child), str(db), session, str(effects), mode]
    args += ["-" if answers is None else json.dumps(answers), str(target)]
    err_path = Path(str(effects) + f".stderr{os.getpid()}")
    with err_path.open("w+") as err:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
        watchdog = threading.Timer(CHILD_TIMEOUT, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            run = read_run(proc.stdout, lambda: os.kill(proc.pid, signal.SIGKILL))
            run.returncode = proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err.seek(0)
        run.stderr = err.read()
    err_path.unlink()
    return run


def read_run(lines: Iterable[str], kill: Callable[[], None]) -> Run:
    """A child's run from its stdout lines (until they end); ``kill`` it (SIGKILL) when it
    reports its kill point."""
    run = Run()
    for line in lines:
        head, _, rest = line.rstrip("\n").partition(" ")
        if head == "ACK":
            seq, kind, sid = rest.split(" ")
            run.acks.append((int(seq), kind))
            run.session_acks.append((sid, int(seq), kind))
        elif head == "DURABLE":
            seq, kind, sid = rest.split(" ")
            run.durable.append((sid, int(seq), kind))
        elif head == "COMMITTED":
            run.commits += 1
        elif head == "AT":
            point, where, detail = rest.split(" ", 2)
            run.at = (int(point), where, detail)
            kill()
        elif head == "RESULT":
            run.result = json.loads(rest)
    return run


def check_audit(db: Path, sessions: list[str], reruns: frozenset[str] = frozenset()) -> list[str]:
    """Problems with a lane's audit records: a broken chain, a tool execution recorded
    twice (except for the idempotent tools in ``reruns``, which a recovery re-runs by
    design), a tool result in the conversation without its execution record."""

    async def read() -> list[str]:
        store = SQLiteStore(db)
        try:
            problems = [] if (await store.audit.verify()).ok else [f"{db.name}: chain broken"]
            for session in sessions:
                records = [
                    r for r in await store.audit.records(session) if r.event == "tool.executed"
                ]
                executed = Counter(r.data["call_id"] for r in records)
                again = {r.data["call_id"] for r in records if r.data["tool"] in reruns}
                twice = [c for c, n in executed.items() if n > 1 and c not in again]
                if twice:
                    problems.append(f"{session}: tool.executed twice for {twice}")
                calls: dict[str, str] = {}  # interrupt id -> its tool call's id
                skipped: set[str] = set()  # calls a human settled with "skip": not re-run
                results: set[str] = set()
                for entry in await store.read_entries(session):
                    if entry.kind == "interrupt_raised":
                        calls |= {
                            i["id"]: i["tool_call"]["id"]
                            for i in entry.data["interrupts"]
                            if i.get("tool_call")
                        }
                    elif entry.kind == "interrupt_answered":
                        skipped |= {
                            calls[key]
                            for key, value in entry.data["answers"].items()
                            if isinstance(value, dict) and "skip" in value
                        }
                    elif entry.kind == "message" and entry.data["message"]["role"] == "tool":
                        results |= {
                            block["tool_call_id"] for block in entry.data["message"]["content"]
                        }
                missing = sorted(results - skipped - set(executed))
                if missing:
                    problems.append(f"{session}: no tool.executed for {missing}")
            return problems
        finally:
            await store.close()

    return asyncio.run(read())


Journals = dict[str, tuple[str, int, list[tuple[int, str, dict[str, Any]]]]]


def tree_journals(db: Path, tree: str) -> Journals:
    """{session: (status, version, entries)} of session ``tree`` and every session under
    it (its children's ids start with ``tree/``), read through a fresh store object."""

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
    """Every session completed; user, (assistant calls, their results)*, final assistant.
    A swarm agent that handed off (its last status's reason is the handoff) ends on the
    handoff's result instead: its next model call was blocked."""
    problems = []
    for sid, (status, _, entries) in sorted(journals.items()):
        if status != "completed":
            problems.append(f"{sid}: status {status}")
        messages = [data["message"] for _, kind, data in entries if kind == "message"]
        roles = [m["role"] for m in messages]
        ends = [data.get("reason") or "" for _, kind, data in entries if kind == "status"]
        last = "tool" if ends and str(ends[-1]).startswith(HANDOFF_MARK) else "assistant"
        if not roles or roles[0] != "user" or roles[-1] != last:
            problems.append(f"{sid}: roles {roles}")
            continue
        turns = messages[1:] if last == "tool" else messages[1:-1]
        for ask, answer in zip(turns[0::2], turns[1::2], strict=False):
            calls = sorted(b["id"] for b in ask["content"] if b["type"] == "tool_call")
            results = sorted(
                b["tool_call_id"] for b in answer["content"] if b["type"] == "tool_result"
            )
            if ask["role"] != "assistant" or answer["role"] != "tool" or calls != results:
                problems.append(f"{sid}: calls {calls} answered by {results}")
        if len(turns) % 2 == 1:
            problems.append(f"{sid}: roles {roles}")
    return problems


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


@dataclass(frozen=True)
class TreeShape:
    """What a full run of a tree (or workflow) child does: its side effects' ``lines``
    (each once), the top's ``final`` answer, its number of ``sessions``, and the part of
    an in_doubt write's point that addresses its node (see :func:`in_doubt_answers`)."""

    lines: list[str]
    final: str
    sessions: int
    point_part: str | Mapping[str, str] | None = None


Runner = Callable[[str, Any, int], Run]
"""Runs one child process: (mode, answers, kill target) -> its Run."""


def drive_tree(
    runner: Runner,
    db: Path,
    tree: str,
    effects: Path,
    targets: list[int],
    shape: TreeShape,
    *,
    max_runs: int,
) -> TreeReport:
    """Run one tree to its end: its n-th run killed at ``targets[n]`` (if any, else not),
    resumed in fresh runs (in_doubt writes answered like a human, from the effects file).

    Checked after every run: each entry the child printed committed (every acknowledged
    one is) still there with the same kind, and, at a kill, no session journaled past its
    last committed entry. At the end: each line once, ``shape.sessions`` sessions, each
    completed and well formed, the top's answer ``shape.final``."""
    report = TreeReport(tree)
    mode, answers = "start", None
    journals: Journals = {}
    while report.runs < max_runs:
        report.runs += 1
        target = targets[report.runs - 1] if report.runs <= len(targets) else 0
        run = runner(mode, answers, target)
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
        elif report.runs == 1 and target:  # (a recovery run may end before its target)
            report.problems.append(f"the first run never reached kill point {target}")

        def answer(asked: list[dict[str, Any]], seen: Journals = journals) -> dict[str, Any]:
            intents = {
                data["call_id"]
                for _, _, entries in seen.values()
                for _, kind, data in entries
                if kind == "tool_intent"
            }
            return in_doubt_answers(
                asked, intents, effects, report.problems, report.in_doubt, shape.point_part
            )

        step = next_run(run, report, mode, journals.get(tree, ("missing", 0, []))[2], answer)
        if step is None:
            break
        mode, answers = step
    else:
        report.problems.append(f"not done after {max_runs} runs")
    counts = Counter(effects.read_text().splitlines() if effects.exists() else [])
    report.duplicates = sum(n - 1 for n in counts.values())
    if set(counts) != set(shape.lines) or any(c != 1 for c in counts.values()):
        report.problems.append(f"effects {sorted(counts.items())}")
    report.sessions = sorted(journals)
    if len(journals) != shape.sessions:
        report.problems.append(f"sessions {sorted(journals)}")
    report.problems += check_sessions(journals)
    final = [d["message"] for _, k, d in journals.get(tree, ("", 0, []))[2] if k == "message"]
    text = "".join(b.get("text", "") for b in final[-1]["content"]) if final else None
    if text != shape.final:
        report.problems.append(f"top answered {text!r}")
    return report


def in_doubt_answers(
    interrupts: list[dict[str, Any]],
    intents: set[str],
    effects: Path,
    problems: list[str],
    in_doubt: Counter[str],
    point_part: str | Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The human's job for in_doubt ``write`` calls: skip one whose line is in the effects
    file, else retry. Anything unexpected goes to ``problems``: another interrupt, a call
    with no journaled intent, a point without ``point_part`` (when given; a mapping gives
    it per line)."""
    present = set(effects.read_text().splitlines()) if effects.exists() else set()
    answers: dict[str, Any] = {}
    if not interrupts:
        problems.append("stop reason interrupt without interrupts")
    for interrupt in interrupts:
        call = interrupt.get("tool_call") or {}
        if interrupt["source"] != "in_doubt" or call.get("name") != "write":
            problems.append(f"unexpected interrupt {interrupt}")
            continue
        line = call["arguments"]["line"]
        part = point_part.get(line, "?") if isinstance(point_part, Mapping) else point_part
        if part is not None and part not in interrupt["point"]:
            problems.append(f"in_doubt write not addressed to {part!r}: {interrupt}")
        if call["id"] not in intents:
            problems.append(f"in_doubt call {call['id']} has no journaled intent")
        if line in present:
            answers[interrupt["id"]] = {"skip": f"wrote {line}"}
            in_doubt["skip"] += 1
        else:
            answers[interrupt["id"]] = "retry"
            in_doubt["retry"] += 1
    return answers


def next_run(
    run: Run,
    report: Any,
    mode: str,
    entries: list[tuple[int, str, dict[str, Any]]],
    answer: Callable[[list[dict[str, Any]]], Any],
) -> tuple[str, Any] | None:
    """The next run's (mode, answers), or None when the lane is done.

    Killed: resume, or start again if no prompt was saved (``entries``, the journal
    that holds it, has no message: the invocation was never accepted). Not killed: its
    run ended (result to ``report.final``) or failed (a line in ``report.problems``), or
    it suspended on interrupts: resume with the human's answers (``answer``)."""
    if run.at is not None:
        accepted = any(kind == "message" for _, kind, _ in entries)
        return ("resume" if accepted else "start"), None
    if run.returncode != 0 or run.result is None:
        report.problems.append(f"run {report.runs} ({mode}) failed: {run.stderr[-2000:]}")
        return None
    reason = run.result["stop_reason"]
    if reason == "interrupt":
        return "resume", answer(run.result["interrupts"])
    if reason == "end_turn":
        report.final = run.result
    else:
        report.problems.append(f"run {report.runs} stopped with {reason}")
    return None
