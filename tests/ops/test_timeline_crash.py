"""The timeline's accounting after a real crash: a child process killed (SIGKILL) right
after a tool's side effect, recovered, the in-doubt call answered by a human (skip, retry
or abort) and resumed (tests/support/crash_child.py)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from crash_campaign import run_child
from ops_cli import cli

from tether.durable import SQLiteStore

WAIT = 1.5
"""Seconds the human takes to answer."""


def _killed_after_the_first_effect(tmp: Path) -> tuple[Path, Path]:
    """A session whose child was killed right after writing L1 (intent journaled, result
    not): the kill point is found by counting points from the start."""
    for target in range(1, 60):
        db, effects = tmp / f"c{target}.db", tmp / f"fx{target}"
        run = run_child(db, "crash", effects, "start", None, target)
        if run.at is not None and run.at[1:] == ("effect", "L1"):
            return db, effects
        assert run.at is not None, "the child ran to its end before writing L1"
    raise AssertionError("no kill point at the first effect")


async def _answer(db: Path, decision: str, response: Any) -> dict[str, Any]:
    store = SQLiteStore(db)
    try:
        [asked] = await store.approvals.pending(session_id="crash")
        assert asked.source == "in_doubt"
        await store.approvals.decide(asked.id, decision, decided_by="alice", response=response)  # type: ignore[arg-type]
        return await store.approvals.answers_for("crash")
    finally:
        await store.close()


def _crashed_and_answered(tmp: Path, decision: str, response: Any = None) -> dict[str, Any]:
    db, effects = _killed_after_the_first_effect(tmp)
    recovered = run_child(db, "crash", effects, "resume", None, 0)
    assert recovered.result is not None, recovered.stderr
    assert recovered.result["stop_reason"] == "interrupt"
    time.sleep(WAIT)
    answers = asyncio.run(_answer(db, decision, response))
    resumed = run_child(db, "crash", effects, "resume", answers, 0)
    assert resumed.result is not None, resumed.stderr
    result = cli("sessions", "timeline", "crash", "--store", str(db), "--json")
    assert result.exit_code == 0, result.output
    timeline: dict[str, Any] = json.loads(result.output)
    timeline["text"] = cli("sessions", "timeline", "crash", "--store", str(db)).output
    return timeline


def _first_write(timeline: dict[str, Any]) -> list[dict[str, Any]]:
    tools = [s for s in timeline["steps"] if s["kind"] == "tool"]
    return [s for s in tools if '"L1"' in json.dumps(s["detail"]["arguments"])]


def _check_accounting(timeline: dict[str, Any]) -> dict[str, Any]:
    split = timeline["time_split"]
    parts = split["model"] + split["tools"] + split["waiting"] + split["tether"]
    assert min(split.values()) >= 0
    assert split["model"] + split["tools"] + split["waiting"] <= split["total"] + 1e-9
    assert parts == pytest.approx(split["total"])
    assert split["waiting"] >= WAIT
    [cut] = [s for s in timeline["steps"] if s["status"] == "crashed"]
    assert (cut["kind"], cut["failed"]) == ("end", True)
    [first, *again] = _first_write(timeline)
    assert first["end"] <= cut["end"]  # ends at the crash (the last entry its process wrote)
    assert first["duration"] < WAIT
    [doubt] = [s for s in timeline["steps"] if s["kind"] == "interrupt"]
    return {"first": first, "again": again, "doubt": doubt}


def test_a_skipped_call_shows_in_doubt_skipped_and_ends_at_the_crash(tmp_path: Path) -> None:
    timeline = _crashed_and_answered(tmp_path, "respond", {"skip": "wrote L1"})
    rows = _check_accounting(timeline)
    assert rows["first"]["status"] == "in doubt -> skipped"
    assert rows["first"]["detail"]["result"] == "wrote L1"
    assert rows["again"] == []
    approval = rows["doubt"]["detail"]["approval"]
    assert approval["label"] == "skipped by alice"
    assert "skipped by alice" in timeline["text"]
    assert "approved by alice" not in timeline["text"]
    assert "in doubt -> skipped" in timeline["text"]


def test_a_retried_call_shows_in_doubt_retried_and_its_new_attempt(tmp_path: Path) -> None:
    timeline = _crashed_and_answered(tmp_path, "approve")  # approve: run it again
    rows = _check_accounting(timeline)
    assert rows["first"]["status"] == "in doubt -> retried"
    [again] = rows["again"]
    assert (again["status"], again["title"]) == ("ok", "write (again)")
    assert rows["doubt"]["detail"]["approval"]["label"] == "retried by alice"


def test_an_aborted_call_shows_in_doubt_aborted(tmp_path: Path) -> None:
    timeline = _crashed_and_answered(tmp_path, "deny")  # deny: abort the run
    rows = _check_accounting(timeline)
    assert (rows["first"]["status"], rows["first"]["failed"]) == ("in doubt -> aborted", True)
    assert rows["doubt"]["detail"]["approval"]["label"] == "aborted by alice"
