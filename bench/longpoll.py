"""Long polls against an unrelated request: does the inbox stay fast with many tabs open?

Usage: `.venv/bin/python bench/longpoll.py [--sessions 1000] [--pollers 200] [--samples 60]`
(before/after a change: run it with `PYTHONPATH=<other checkout>/src`).

A SQLite store gets --sessions sessions and as many pending approvals. `tether serve`
runs on it in its own process. --pollers clients each keep one `GET /api/events` long
poll open (20 s, re-polled when answered), then --samples requests
`GET /api/approvals?limit=1` are timed one after the other, 50 ms apart, while the polls
wait; p50 and nearest-rank p99 of their latency are printed (and the same with no poll
open, as the baseline). A sample slower than --timeout seconds counts as the timeout;
the run stops sampling after --budget seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tether.control.interrupts import Interrupt
from tether.durable import SQLiteStore
from tether.messages import ToolCall

TETHER = str(Path(sys.executable).with_name("tether"))


@dataclass
class Opened:
    """How many pollers got their first cursor (``all`` is set when every one did)."""

    want: int
    count: int = 0
    all: asyncio.Event = field(default_factory=asyncio.Event)


async def build(path: Path, sessions: int) -> str:
    """The store: ``sessions`` sessions with one message each, one pending approval each."""
    store = SQLiteStore(path)
    try:
        for i in range(sessions):
            sid = f"s-{i:05d}"
            await store.create(sid)
            await store.append(sid, 0, [("message", {"role": "user", "content": "pay"})])
            call = ToolCall(f"c{i}", "transfer", {"to": "bob", "amount": i})
            interrupt = Interrupt(f"i{i}", "confirm:Ask", "pay?", "intervention", "x", call)
            await store.approvals.request(sid, interrupt)
        return (await store.approvers.add("viewer", ["viewer"])).token
    finally:
        await store.close()


async def get(port: int, path: str, token: str, seconds: float) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a fresh connection: (status, body)."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), seconds)
    try:
        request = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            "Connection: close\r\n\r\n"
        )
        writer.write(request.encode())
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), seconds)
    finally:
        writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def poller(port: int, token: str, stop: asyncio.Event, opened: Opened) -> None:
    cursor = json.loads((await get(port, "/api/events", token, 120))[1])["cursor"]
    opened.count += 1
    if opened.count == opened.want:
        opened.all.set()
    while not stop.is_set():
        try:
            status, body = await get(port, f"/api/events?since={cursor}&wait=20", token, 60)
        except (TimeoutError, OSError):
            continue
        if status == 200:
            cursor = json.loads(body)["cursor"]


async def sample(port: int, token: str, n: int, seconds: float, budget: float) -> list[float]:
    out: list[float] = []
    end = time.perf_counter() + budget
    while len(out) < n and time.perf_counter() < end:
        start = time.perf_counter()
        try:
            status, _ = await get(port, "/api/approvals?limit=1", token, seconds)
            assert status == 200, status
            out.append(time.perf_counter() - start)
        except TimeoutError:
            out.append(seconds)
        await asyncio.sleep(0.05)
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def report(name: str, values: list[float]) -> None:
    print(
        f"{name:<28} n={len(values):<4} p50 {pct(values, 50) * 1000:9.1f} ms   "
        f"p99 {pct(values, 99) * 1000:9.1f} ms   max {max(values) * 1000:9.1f} ms",
        flush=True,
    )


async def measure(port: int, token: str, args: argparse.Namespace) -> None:
    report("no long poll open", await sample(port, token, 20, args.timeout, args.budget))
    stop = asyncio.Event()
    opened = Opened(args.pollers)
    tasks = [asyncio.create_task(poller(port, token, stop, opened)) for _ in range(args.pollers)]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(opened.all.wait(), args.budget)
    await asyncio.sleep(1.0)  # every poll is waiting now
    values = await sample(port, token, args.samples, args.timeout, args.budget)
    report(f"{opened.count} long polls open", values)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--pollers", type=int, default=200)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--budget", type=float, default=120.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        started = time.perf_counter()
        token = asyncio.run(build(path, args.sessions))
        print(
            f"store: {args.sessions} sessions, {args.sessions} pending approvals "
            f"({time.perf_counter() - started:.1f} s to build)",
            flush=True,
        )
        port = free_port()
        server = subprocess.Popen(
            [TETHER, "serve", "--store", str(path), "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=os.environ.copy(),
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), 0.5).close()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("tether serve did not start") from None
                    time.sleep(0.1)
            asyncio.run(measure(port, token, args))
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()
