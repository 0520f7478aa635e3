"""What both crash campaigns (tests/reliability) share: run a child that may be killed at a
point, and check a lane's audit records.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.durable import SQLiteStore

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
    run = Run()
    with err_path.open("w+") as err:
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
        watchdog = threading.Timer(CHILD_TIMEOUT, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
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
                    os.kill(proc.pid, signal.SIGKILL)
                elif head == "RESULT":
                    run.result = json.loads(rest)
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


def in_doubt_answers(
    interrupts: list[dict[str, Any]],
    intents: set[str],
    effects: Path,
    problems: list[str],
    in_doubt: Counter[str],
    point_part: str | None = None,
) -> dict[str, Any]:
    """The human's job for in_doubt ``write`` calls: skip one whose line is in the effects
    file, else retry. Anything unexpected goes to ``problems``: another interrupt, a call
    with no journaled intent, a point without ``point_part`` (when given)."""
    present = set(effects.read_text().splitlines()) if effects.exists() else set()
    answers: dict[str, Any] = {}
    if not interrupts:
        problems.append("stop reason interrupt without interrupts")
    for interrupt in interrupts:
        call = interrupt.get("tool_call") or {}
        if interrupt["source"] != "in_doubt" or call.get("name") != "write":
            problems.append(f"unexpected interrupt {interrupt}")
            continue
        if point_part is not None and point_part not in interrupt["point"]:
            problems.append(f"in_doubt write not addressed to {point_part!r}: {interrupt}")
        if call["id"] not in intents:
            problems.append(f"in_doubt call {call['id']} has no journaled intent")
        line = call["arguments"]["line"]
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
