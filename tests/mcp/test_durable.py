"""Crash recovery of MCP calls: idempotentHint re-runs, a write is in doubt, a vanished tool."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tether.mcp import MCPServer

APP = Path(__file__).parents[1] / "support" / "mcp_durable_app.py"


def kill_mid_call(*args: str, env: dict[str, str] | None = None) -> None:
    """Start the app and SIGKILL it once its tool call is in flight."""
    child = subprocess.Popen(
        [sys.executable, str(APP), *args, "start"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "CALLING"
        time.sleep(1.0)  # the intent is journaled before the MCP request goes out
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)


def resume(*args: str, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, str(APP), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
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


def test_a_pending_call_to_a_tool_the_server_dropped_resumes_as_a_clear_in_doubt_answer(
    tmp_path, start_http
):
    """Over streamable HTTP: a write is cut by a crash, then the server drops the tool
    (tools/list_changed); the resumed session asks a human, saying the tool is gone, and
    'retry' gives the model an unknown-tool error instead of a crash."""
    db, target, url = str(tmp_path / "t.db"), str(tmp_path / "w.txt"), start_http()
    env = {"FIXTURE_URL": url}
    kill_mid_call(db, "g", "wait", target, "30", env=env)
    with MCPServer.http(url, allow=["grow"]) as server:
        (grow,) = server.tools()
        assert asyncio.run(grow.invoke({"remove": "wait"})) == "grown"
    result = resume(db, "g", "wait", target, "0", "resume", env=env)
    assert result["stop_reason"] == "interrupt"
    (pending,) = result["interrupts"]
    assert pending["source"] == "in_doubt"
    assert pending["tool_call"]["name"] == "wait"
    assert pending["reason"].startswith(
        "tool 'wait' is no longer one of the agent's tools (its source, such as an MCP "
        "server, stopped offering it); the process running this session died"
    )
    retried = resume(
        db, "g", "wait", target, "0", "resume", json.dumps({pending["id"]: "retry"}), env=env
    )
    assert retried["stop_reason"] == "end_turn"
    assert retried["text"].startswith("done: Error: Unknown tool 'wait'. Available tools: ")
