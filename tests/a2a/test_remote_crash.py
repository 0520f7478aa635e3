"""A caller SIGKILLed between sending a remote task and answering it: the resumed caller
reattaches to the same remote task, and the remote sees the task message once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from a2a_sdk_server import serve

from tether.durable import SQLiteStore
from tether.session import fold

SUPPORT = Path(__file__).parent.parent / "support"
CALLER = [sys.executable, str(SUPPORT / "remote_caller.py")]


def get(base: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as response:
        out: dict[str, Any] = json.loads(response.read())
        return out


def wait_for(check: Any, what: str, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        assert proc is None or proc.poll() is None, f"the caller exited before {what}"
        time.sleep(0.05)


def note(db: str) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        store = SQLiteStore(db)
        try:
            record = await store.load("remote-job")
        finally:
            await store.close()
        if record is None:
            return {}
        notes = fold(record).state.get("__tether_remote_calls__") or {}
        return dict(next(iter(notes.values()), {}))

    return asyncio.run(read())


def step(db: str, base: str, task: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [*CALLER, db, base, task, *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def _env() -> dict[str, str]:
    paths = [str(SUPPORT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def crash_while_sending(db: str, base: str, task: str, journaled: bool) -> None:
    """Start the caller and SIGKILL it while its remote task is held by the remote."""
    proc = subprocess.Popen([*CALLER, db, base, task, "start"], env=_env(), stdout=subprocess.PIPE)
    try:
        wait_for(lambda: get(base, "/stats")["messages"] == 1, "the remote got the task", proc)
        if journaled:
            wait_for(lambda: "task" in note(db), "the task id journaled", proc)
        else:
            assert "task" not in note(db)  # the remote has made no task yet
            assert "context" in note(db)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    time.sleep(1.2)  # the dead caller's 1 s lease expires


@pytest.mark.parametrize(("task", "journaled"), [("hold", True), ("quiet", False)])
def test_a_caller_killed_mid_call_reattaches_and_the_remote_sees_one_message(
    tmp_path: Path, task: str, journaled: bool
) -> None:
    db = str(tmp_path / "caller.db")
    with serve() as base:
        crash_while_sending(db, base, f"{task} the door", journaled)
        get(base, "/release")
        wait_for(lambda: get(base, "/stats")["asked"] == 1, "the remote asked its question")
        recovered = step(db, base, f"{task} the door", "resume", "{}")
        assert recovered["stop_reason"] == "interrupt", recovered
        [asked] = recovered["interrupts"]
        assert asked["point"] == "painter#c1/color"
        assert asked["source"] == "tool"
        done = step(db, base, f"{task} the door", "resume", json.dumps({asked["id"]: "green"}))
        assert done["stop_reason"] == "end_turn", done
        assert done["text"] == f"caller got (ok): done: {task} the door in green"
        assert get(base, "/stats") == {
            "messages": 2,
            "new_tasks": 1,
            "continued": 1,
            "asked": 1,
            "canceled": 0,
        }


def test_a_remote_that_cannot_be_asked_after_the_crash_puts_the_call_in_doubt(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "caller.db")
    with serve() as base:
        crash_while_sending(db, base, "hold the roof", True)
    # the remote is gone: nobody can say whether the task ran
    recovered = step(db, base, "hold the roof", "resume", "{}")
    assert recovered["stop_reason"] == "interrupt", recovered
    [doubt] = recovered["interrupts"]
    assert (doubt["point"], doubt["source"]) == ("in_doubt", "in_doubt")
    answer = {doubt["id"]: {"skip": "painted by hand"}}
    done = step(db, base, "hold the roof", "resume", json.dumps(answer))
    assert done["stop_reason"] == "end_turn", done
    assert done["text"] == "caller got (ok): painted by hand"


def test_a_caller_killed_after_forwarding_an_answer_does_not_forward_it_again(
    tmp_path: Path,
) -> None:
    import threading

    db = str(tmp_path / "caller.db")
    with serve() as base:
        first = step(db, base, "paint the window", "start")
        [asked] = first["interrupts"]
        answer = json.dumps({asked["id"]: "slow red"})
        proc = subprocess.Popen(
            [*CALLER, db, base, "paint the window", "resume", answer],
            env=_env(),
            stdout=subprocess.PIPE,
        )
        try:
            wait_for(lambda: get(base, "/stats")["continued"] == 1, "the remote got it", proc)
            assert "answered" in note(db)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        time.sleep(1.2)
        # the remote still asks (it holds the answer) when the caller comes back
        threading.Timer(1.5, lambda: get(base, "/release")).start()
        done = step(db, base, "paint the window", "resume", "{}")
        assert done["stop_reason"] == "end_turn", done
        assert done["text"] == "caller got (ok): done: paint the window in slow red"
        assert get(base, "/stats")["continued"] == 1
        assert get(base, "/stats")["new_tasks"] == 1
