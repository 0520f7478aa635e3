"""An interrupt outlives the server: ``tether serve --app`` killed (SIGKILL) while a thread
waits, started again, takes the resume entries and the tool runs once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ag_ui_app import post_run, run_input, user
from live_server import call

from tether.durable import SQLiteStore

TETHER = str(Path(sys.executable).with_name("tether"))
SUPPORT = str(Path(__file__).resolve().parent.parent / "support")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(db: Path, effects: Path, port: int) -> subprocess.Popen[str]:
    source = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, source])),
        "TETHER_AGUI_DB": str(db),
        "TETHER_AGUI_EFFECTS": str(effects),
    }
    args = [TETHER, "serve", "--store", str(db), "--port", str(port)]
    proc = subprocess.Popen(
        [*args, "--app", "ag_ui_app:served_agent"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            call("GET", f"http://127.0.0.1:{port}/", timeout=2)
            return proc
        except OSError:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "tether serve did not start"
            time.sleep(0.1)


async def _tokens(db: Path) -> dict[str, str]:
    store = SQLiteStore(db)
    try:
        return {
            "caller": (await store.approvers.add("caller", ["invoke"])).token,
            "boss": (await store.approvers.add("boss", ["invoke", "approve:transfer"])).token,
        }
    finally:
        await store.close()


def test_a_waiting_thread_survives_sigkill_and_resumes_once(private_tmp):
    db, effects = private_tmp / "restart.db", private_tmp / "effects.jsonl"
    tokens = asyncio.run(_tokens(db))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(db, effects, port)
    try:
        status, events = post_run(url, tokens["caller"], run_input("pay-r", "r1", [user("pay")]))
        assert status == 200
        ids = [i.id for i in events[-1].outcome.interrupts]
        assert len(ids) == 2
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=20)
    assert not effects.exists()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = _serve(db, effects, port)
    try:
        resume = [
            {"interruptId": ids[0], "status": "resolved"},
            {"interruptId": ids[1], "status": "cancelled"},
        ]
        body = run_input("pay-r", "r2", [user("pay")], resume=resume)
        status, events = post_run(url, tokens["boss"], body)
        assert status == 200, events
        assert events[-1].outcome.type == "success"
        again = post_run(url, tokens["boss"], run_input("pay-r", "r3", [], resume=resume))
        assert again[0] == 400
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
    lines = [json.loads(line) for line in effects.read_text().splitlines()]
    assert lines == [{"to": "bob", "amount": 500}]
