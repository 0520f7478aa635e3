"""AG-UI time to first event: ``POST /ag-ui`` until the first SSE event arrives.

Usage: `.venv/bin/python bench/ag_ui_first_event.py [--runs 200]`

A real server (``create_app`` with an ``--app`` factory, uvicorn on 127.0.0.1) on a SQLite
store; each run starts a new thread with a ScriptedModel agent that answers in one text
turn. Per run, over one kept-alive HTTP connection: the time until the response headers
and the first event (RUN_STARTED) arrive, until the first TEXT_MESSAGE_CONTENT, and until
the end of the stream. Prints the median and p95 of each (one run of --runs requests;
the lead folds this into bench/protocols.py).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "tests" / "support"))

from live_server import live_server  # noqa: E402

from tether import Agent  # noqa: E402
from tether.durable import SQLiteStore  # noqa: E402
from tether.models import ScriptedModel  # noqa: E402
from tether.ops.server import create_app  # noqa: E402


def _factory(store: SQLiteStore):  # type: ignore[no-untyped-def]
    def make(session_id: str) -> Agent:
        return Agent(
            model=ScriptedModel(lambda m, s: "hello there"), store=store, session_id=session_id
        )

    return make


async def _token(path: Path) -> str:
    store = SQLiteStore(path)
    try:
        return (await store.approvers.add("bench", ["invoke"])).token
    finally:
        await store.close()


def _one(conn: http.client.HTTPConnection, token: str, thread: str) -> tuple[float, float, float]:
    body = json.dumps(
        {
            "threadId": thread,
            "runId": "r1",
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        }
    )
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    start = time.perf_counter()
    conn.request("POST", "/ag-ui", body=body, headers=headers)
    response = conn.getresponse()
    assert response.status == 200, response.read()
    first = text = 0.0
    buffer = b""
    while True:
        line = response.readline()
        if not line:
            break
        buffer += line
        if line == b"\n" and buffer.strip():
            event = json.loads(buffer.decode().removeprefix("data: "))
            buffer = b""
            now = time.perf_counter() - start
            if not first:
                first = now
            if event["type"] == "TEXT_MESSAGE_CONTENT" and not text:
                text = now
    return first, text, time.perf_counter() - start


def ag_ui_first_event(runs: int = 200) -> dict[str, dict[str, float]]:
    """Median and p95 (ms) of the first event, the first text and the whole run, over
    ``runs`` runs, each a new thread (a new durable SQLite session)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        token = asyncio.run(_token(path))
        app = create_app(
            SQLiteStore(path), app_factory=_factory(SQLiteStore(path)), close_store=True
        )
        with live_server(app) as url:
            host, port = url.removeprefix("http://").split(":")
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
            for i in range(5):  # warm up: imports, the first connection, SQLite's first pages
                _one(conn, token, f"warm-{i}")
            samples = [_one(conn, token, f"bench-{i}") for i in range(runs)]
            conn.close()
    out: dict[str, dict[str, float]] = {}
    for name, index in (("first event", 0), ("first text", 1), ("whole run", 2)):
        values = sorted(s[index] * 1000 for s in samples)
        out[name] = {
            "median_ms": statistics.median(values),
            "p95_ms": values[int(len(values) * 0.95) - 1],
        }
    return out


def report(runs: int) -> None:
    for name, value in ag_ui_first_event(runs).items():
        print(
            f"AG-UI {name:12} median {value['median_ms']:7.2f} ms   p95 {value['p95_ms']:7.2f} ms"
        )
    print(f"({runs} AG-UI runs, each a new thread: a new durable session in SQLite)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    report(parser.parse_args().runs)


if __name__ == "__main__":
    main()
