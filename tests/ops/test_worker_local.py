"""``tether worker`` on SQLite: ``--once``, and graceful shutdown on SIGTERM."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from worker_testing import approve, env, lines, stop, suspend, wait_for, worker_cmd, workers

from tether.durable import SQLiteStore


async def test_once_resumes_what_is_ready_and_exits(tmp_path: Path) -> None:
    db, out = str(tmp_path / "t.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    sids = [f"s{i}" for i in range(5)]
    await suspend(store, sids)
    assert await approve(store, sids[:4]) == 4
    done = await asyncio.to_thread(
        subprocess.run,
        worker_cmd(db, "--once", "--concurrency", "2"),
        env=env(db, out),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(lines(out)) == [f"s{i}:1" for i in range(4)]
    assert done.stdout.count(" completed ") == 4
    statuses = {s.session_id: s.status for s in await store.list_sessions()}
    assert statuses == {**{f"s{i}": "completed" for i in range(4)}, "s4": "suspended"}
    await store.close()


async def test_sigterm_finishes_the_current_session_within_the_grace(tmp_path: Path) -> None:
    db, out = str(tmp_path / "t.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    await suspend(store, ["slow-a"])
    await approve(store)
    environ = env(db, out, TETHER_WORKER_SLOW="1.0")
    with workers([worker_cmd(db, "--grace", "20", "--poll", "0.1")], environ, tmp_path) as [w]:
        await wait_for(lambda: _has(out, "slow-a:1"), 20, "the tool to start")
        assert stop(w) == 0
    log = (tmp_path / "worker0.log").read_text()
    assert "slow-a completed" in log, log
    assert lines(out) == ["slow-a:1"]
    assert [s.status for s in await store.list_sessions()] == ["completed"]
    await store.close()


async def test_sigterm_past_the_grace_hands_the_session_back(tmp_path: Path) -> None:
    db, out = str(tmp_path / "t.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    await suspend(store, ["two-slow"])  # two tool calls, two model turns
    await approve(store)
    environ = env(db, out, TETHER_WORKER_SLOW="1.0")
    with workers([worker_cmd(db, "--grace", "0.2", "--poll", "0.1")], environ, tmp_path) as [w]:
        await wait_for(lambda: _has(out, "two-slow:1"), 20, "the tool to start")
        assert stop(w) == 0
    log = (tmp_path / "worker0.log").read_text()
    assert "two-slow handed back" in log, log
    assert lines(out) == ["two-slow:1"]  # paused after the first call: the second never ran
    assert [s.status for s in await store.list_sessions()] == ["ready"]
    again = await asyncio.to_thread(
        subprocess.run,
        worker_cmd(db, "--once"),
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stdout
    assert "two-slow completed" in again.stdout
    assert lines(out) == ["two-slow:1", "two-slow:2"]  # nothing ran twice
    await store.close()


async def _has(out: Path, line: str) -> bool:
    return line in lines(out)
