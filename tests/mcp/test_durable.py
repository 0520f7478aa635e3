"""Crash recovery of MCP calls: idempotentHint re-runs, a write is in doubt, a vanished tool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

APP = Path(__file__).parents[1] / "support" / "mcp_durable_app.py"


def kill_mid_call(*args: str) -> None:
    """Start the app and SIGKILL it once its tool call is in flight."""
    child = subprocess.Popen(
        [sys.executable, str(APP), *args, "start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "CALLING"
        time.sleep(1.0)  # the intent is journaled before the MCP request goes out
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)


def resume(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, str(APP), *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_read_only_call_cut_by_a_crash_is_re_run_on_recovery(tmp_path):
    db = str(tmp_path / "t.db")
    kill_mid_call(db, "r", "slow_read", "notes", "30")
    result = resume(db, "r", "slow_read", "notes", "0", "resume")
    assert result["stop_reason"] == "end_turn"
    assert result["text"] == "done: read notes"


def test_a_write_cut_by_a_crash_is_in_doubt_and_not_repeated(tmp_path):
    db, target = str(tmp_path / "t.db"), tmp_path / "effects.txt"
    kill_mid_call(db, "w", "slow_write", str(target), "30")
    result = resume(db, "w", "slow_write", str(target), "0", "resume")
    assert result["stop_reason"] == "interrupt"
    (pending,) = result["interrupts"]
    assert pending["source"] == "in_doubt"
    assert pending["tool_call"]["name"] == "slow_write"
    assert not target.exists()  # not silently repeated
    skipped = resume(
        db,
        "w",
        "slow_write",
        str(target),
        "0",
        "resume",
        json.dumps({pending["id"]: {"skip": "not written"}}),
    )
    assert skipped["text"] == "done: not written"
    assert not target.exists()


def test_a_tool_that_vanished_from_the_server_gets_an_answer_not_a_crash(tmp_path):
    db = str(tmp_path / "t.db")
    kill_mid_call(db, "v", "slow_read", "notes", "30")
    result = resume(db, "v", "slow_read", "notes", "0", "resume", "deny")
    assert result["stop_reason"] == "interrupt"
    (pending,) = result["interrupts"]
    assert pending["source"] == "in_doubt"  # the tool is unknown now: a human decides
    assert pending["tool_call"]["name"] == "slow_read"
