"""Session views over HTTP: does the sessions list stay fast with thousands of sessions, and
the timeline with a long session?

Usage: `.venv/bin/python bench/session_views.py [--sessions 2000] [--steps 1000] [--samples 50]`

A SQLite store gets --sessions sessions (three runs' usage each, every tenth with a pending
approval) and one session of --steps steps (model call, tool call, alternating, as a run
journals them). The server runs in this process (uvicorn on 127.0.0.1, a thread); each
request below is timed --samples times one after the other, and p50 and nearest-rank p99
printed: the first and the last page of the list (50 rows), a status filter, an id search,
and the long session's timeline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import socket
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import uvicorn

from tether.control.interrupts import Interrupt
from tether.durable import SQLiteStore
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.ops.server import create_app


def usage(calls: int) -> dict[str, int]:
    return {
        "input_tokens": 120 * calls,
        "output_tokens": 30 * calls,
        "total_tokens": 150 * calls,
        "model_calls": calls,
        "tool_calls": calls,
        "model_retries": 0,
        "model_fallbacks": 0,
    }


async def build(path: Path, sessions: int, steps: int) -> str:
    store = SQLiteStore(path)
    try:
        for i in range(sessions):
            sid = f"team-{i % 7}/s-{i:05d}"
            await store.create(sid)
            entries: list[Any] = [("usage", {"usage": usage(n)}) for n in (1, 2, 3)]
            entries.append(("status", {"status": "completed", "reason": None}))
            await store.append(sid, 0, entries, status="completed")
            if i % 10 == 0:
                call = ToolCall(f"c{i}", "transfer", {"to": "bob", "amount": i})
                interrupt = Interrupt(f"i{i}", "confirm:Ask", "pay?", "intervention", "x", call)
                await store.approvals.request(sid, interrupt)
        long_id = "long/session"
        await store.create(long_id)
        start = time.time()
        entries = [
            ("status", {"status": "running", "started_at": start, "by": "bench", "resume": False}),
            ("message", {"message": Message.user("go").to_dict()}),
        ]
        for n in range(steps // 2):
            call = ToolCall(f"call-{n}", "search", {"query": f"q {n}", "api_key": "sk-123456789"})
            said = Message("assistant", [call], Usage(100 + n, 20))
            result = ToolResult(f"call-{n}", "search", f"result {n} " * 20)
            entries += [
                ("message", {"message": said.to_dict()}),
                ("tool_intent", {"call_id": call.id, "name": call.name}),
                ("message", {"message": Message("tool", [result]).to_dict()}),
            ]
        entries += [
            ("usage", {"usage": usage(steps // 2)}),
            ("status", {"status": "completed", "reason": None}),
        ]
        await store.append(long_id, 0, entries, status="completed")
        return (await store.approvers.add("viewer", ["viewer"])).token
    finally:
        await store.close()


def get(url: str, token: str) -> tuple[float, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    began = time.perf_counter()
    with opener.open(request, timeout=60) as response:
        body = json.loads(response.read())
    return time.perf_counter() - began, body


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "views.db"
        began = time.perf_counter()
        token = asyncio.run(build(path, args.sessions, args.steps))
        print(
            f"built {args.sessions} sessions + 1 of {args.steps} steps in "
            f"{time.perf_counter() - began:.1f} s"
        )
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        app = create_app(SQLiteStore(path), close_store=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        base = f"http://127.0.0.1:{port}"
        last = max(0, args.sessions + 1 - 50)  # the last full page
        cases = {
            "list, first page": "/api/sessions?limit=50",
            f"list, page at offset {last}": f"/api/sessions?limit=50&offset={last}",
            "list, status=completed": "/api/sessions?limit=50&status=completed",
            "list, search 'team-3/'": "/api/sessions?limit=50&q=team-3/",
            f"timeline, {args.steps} steps": "/api/timeline/long%2Fsession",
        }
        try:
            for name, path_ in cases.items():
                _, body = get(base + path_, token)  # warm up, and check the answer
                if "steps" in body:
                    assert (
                        len([s for s in body["steps"] if s["kind"] in ("model", "tool")])
                        >= args.steps
                    )
                    assert "sk-123456789" not in json.dumps(body)
                else:
                    assert body["sessions"], body
                times = [get(base + path_, token)[0] * 1000 for _ in range(args.samples)]
                print(
                    f"{name:32} p50 {percentile(times, 50):7.1f} ms   "
                    f"p99 {percentile(times, 99):7.1f} ms"
                )
        finally:
            server.should_exit = True
            thread.join(timeout=10)


if __name__ == "__main__":
    main()
