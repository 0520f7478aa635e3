"""``tether serve`` as an operator starts it: a real process, its log free of tokens."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from live_server import call, seed

from tether.durable import SQLiteStore

TETHER = str(Path(sys.executable).with_name("tether"))
SUPPORT = str(Path(__file__).parents[2] / "support")
SOURCE = os.environ.get("PYTHONPATH")  # the tether source the tests run against, if set


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _seed(path: Path) -> tuple[dict[str, str], str]:
    store = SQLiteStore(path)
    try:
        return await seed(store)
    finally:
        await store.close()


def test_tether_serve_serves_the_inbox_and_never_logs_tokens(tmp_path):
    db = tmp_path / "serve.db"
    tokens, approval_id = asyncio.run(_seed(db))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, SOURCE]))}
    args = [TETHER, "serve", "--store", str(db), "--port", str(port)]
    proc = subprocess.Popen(
        [*args, "--app", "ops_agents:validating_agent"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                status, page = call("GET", url + "/", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "tether serve did not start"
                time.sleep(0.1)
        assert status == 200
        assert str(db) in page  # the store is named in the page title
        assert call("GET", url + "/api/approvals")[0] == 401
        decision = f"{url}/api/approvals/{approval_id}/decision"
        edit = {"decision": "approve", "edited_args": {"amount": 7}}
        status, body = call("POST", decision, tokens["alice"], edit)
        assert status == 200
        assert body["decided_by"] == "alice"
        assert call("GET", url + "/api/sessions", tokens["nobody"])[0] == 403
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert "Uvicorn running on http://127.0.0.1" in out
    assert "/api/approvals" in out  # the access log is on...
    for token in tokens.values():  # ...and holds no token, nor any part of its secret
        assert token.split("_", 2)[2] not in out


def test_tether_serve_creates_a_missing_store_and_refuses_a_bad_app(tmp_path):
    db = tmp_path / "new.db"
    port = free_port()
    proc = subprocess.Popen(
        [TETHER, "serve", "--store", str(db), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                assert call("GET", url + "/", timeout=2)[0] == 200
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                assert time.monotonic() < deadline, "tether serve did not start"
                time.sleep(0.1)
        added = subprocess.run(
            [TETHER, "approvers", "add", "alice", "--role", "approve:*", "--store", str(db)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert added.returncode == 0, added.stderr
        token = added.stdout.strip().splitlines()[-1]
        status, body = call("GET", url + "/api/approvals", token)
        assert (status, body["approvals"]) == (200, [])
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    nowhere = subprocess.run(
        [TETHER, "serve", "--store", str(tmp_path / "no" / "x.db")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "500"},
    )
    assert nowhere.returncode == 1
    assert f"cannot create a tether store at {tmp_path / 'no' / 'x.db'}" in nowhere.stderr
    bad = subprocess.run(
        [TETHER, "serve", "--store", str(tmp_path / "none.db"), "--app", "nomodule"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "module:factory" in bad.stderr
    assert not (tmp_path / "none.db").exists()  # a bad --app stops before the store


def test_tether_serve_refuses_to_start_on_a_file_that_is_not_a_store(tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("meeting notes, not a database\n" * 100)
    port = free_port()
    refused = subprocess.run(
        [TETHER, "serve", "--store", str(junk), "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1, refused.stderr
    said = "".join(refused.stderr.split())  # Rich wraps long lines
    assert "isnotanSQLitedatabase" in said
    assert str(junk).replace(" ", "") in said
    assert "Uvicorn running" not in refused.stdout + refused.stderr
    assert junk.read_text() == "meeting notes, not a database\n" * 100  # untouched
    with socket.socket() as sock:  # nothing listens on the port
        assert sock.connect_ex(("127.0.0.1", port)) != 0
