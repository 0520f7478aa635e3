"""``tether worker`` and ``tether serve`` as a service runs them: the store from
TETHER_STORE, and a stdout or stderr whose reader went away (systemd, Docker, a closed
terminal)."""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from worker_testing import APP, TETHER, approve, env, lines, suspend, wait_for

from tether.durable import SQLiteStore


async def test_the_worker_opens_the_store_named_by_tether_store(tmp_path: Path) -> None:
    db, out = str(tmp_path / "t.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    await suspend(store, ["env-1"])
    await approve(store)
    environ = env(db, out, TETHER_STORE=db)
    done = await asyncio.to_thread(
        subprocess.run,
        [TETHER, "worker", "--app", APP, "--once"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path / "..",  # no ./tether.db there: only TETHER_STORE names the store
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"on {db}" in done.stdout
    assert "env-1 completed" in done.stdout
    assert lines(out) == ["env-1:1"]
    assert [s.status for s in await store.list_sessions()] == ["completed"]
    await store.close()


def _closed_pipe() -> tuple[int, int]:
    """(our reading end, the child's writing end) of a pipe."""
    return os.pipe()


def _hung_up_terminal() -> tuple[int, int]:
    """(the master, the child's terminal) of a pseudo-terminal: closing the master hangs
    the terminal up, and the child's next write fails with EIO."""
    return pty.openpty()


@pytest.mark.parametrize("reader", [_closed_pipe, _hung_up_terminal], ids=["pipe", "pty"])
async def test_the_worker_keeps_working_after_its_output_reader_goes_away(
    tmp_path: Path, reader
) -> None:
    """EPIPE on a pipe, EIO on a terminal that hung up: the log line is dropped, the worker
    resumes the next session and stops cleanly on SIGTERM."""
    db, out = str(tmp_path / "t.db"), tmp_path / "out.txt"
    store = SQLiteStore(db)
    await suspend(store, ["first", "second"])
    theirs, ours = reader()
    proc = await asyncio.to_thread(
        subprocess.Popen,
        [TETHER, "worker", "--app", APP, "--store", db, "--poll", "0.05"],
        stdout=ours,
        stderr=ours,
        env=env(db, out),
    )
    os.close(ours)
    try:
        banner = await asyncio.to_thread(os.read, theirs, 4096)
        assert b"worker" in banner
        os.close(theirs)  # the reader is gone: every later line fails to write
        theirs = -1
        await approve(store, ["first"])
        await wait_for(lambda: _done(store, "first"), 30, "the first session")
        assert proc.poll() is None, "the worker died on its log line"
        await approve(store, ["second"])
        await wait_for(lambda: _done(store, "second"), 30, "the second session")
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 20) == 0
    finally:
        if theirs >= 0:
            os.close(theirs)
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert lines(out) == ["first:1", "second:1"]
    await store.close()


async def _done(store: SQLiteStore, session_id: str) -> bool:
    record = await store.load(session_id)
    return record is not None and record.status == "completed"


@pytest.mark.parametrize("reader", [_closed_pipe, _hung_up_terminal], ids=["pipe", "pty"])
def test_serve_keeps_answering_after_its_log_reader_goes_away(tmp_path: Path, reader) -> None:
    """uvicorn's access log writes a line per request: with nobody reading, the requests
    are still answered and SIGINT still stops the server cleanly."""
    db = tmp_path / "serve.db"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    theirs, ours = reader()
    proc = subprocess.Popen(
        [TETHER, "serve", "--store", str(db), "--port", str(port)],
        stdout=ours,
        stderr=ours,
        env=env(str(db), tmp_path / "out.txt"),
    )
    os.close(ours)
    url = f"http://127.0.0.1:{port}/api/approvals"
    try:
        deadline = time.monotonic() + 20
        while _status(url) is None:
            assert proc.poll() is None, "tether serve exited"
            assert time.monotonic() < deadline, "tether serve did not start"
            time.sleep(0.1)
        os.close(theirs)
        theirs = -1
        for _ in range(20):  # far more log lines than a pipe or terminal buffer lost
            assert _status(url) == 401
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if theirs >= 0:
            os.close(theirs)
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None
