"""Protocol hosts against the bare SDKs, one run: what serving over A2A costs.

Usage: `.venv/bin/python bench/protocols.py [--tasks 200] [--callers 100] [--total 1000]`

A2A: `tether serve --app` (a scripted agent that replies at once, each task a durable
SQLite session) against a server built only from a2a-sdk's classes (an AgentExecutor
that replies at once, the SDK's DefaultRequestHandler and InMemoryTaskStore), each in its
own process, both driven by the a2a-sdk client over HTTP on this machine:

* :func:`a2a_latency` - ``--tasks`` SendMessage calls one after the other; median and p90
  milliseconds per task, the added latency and the ratio.
* :func:`a2a_throughput` - ``--total`` tasks sent by ``--callers`` concurrent callers;
  tasks per second.

AG-UI: ``POST /ag-ui`` on `tether serve --app`, time to the first event, the first text and
the whole run (bench/ag_ui_first_event.py, ``--ag-ui-runs``; each run a new thread).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState

from tether.durable import SQLiteStore

HERE = Path(__file__).resolve().parent
TETHER = str(Path(sys.executable).with_name("tether"))


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(url + "/.well-known/agent-card.json", timeout=2, trust_env=False)
            return
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not start") from None
            time.sleep(0.1)


@contextmanager
def bare_server() -> Iterator[tuple[str, str | None]]:
    """The a2a-sdk-only server: (base URL, no token)."""
    port = _port()
    proc = subprocess.Popen([sys.executable, str(HERE / "_a2a_bare.py"), str(port)])
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, proc)
        yield url, None
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@contextmanager
def tether_server(tmp: Path) -> Iterator[tuple[str, str | None]]:
    """``tether serve --app`` on a fresh SQLite store: (base URL, an invoke token)."""
    db = tmp / "bench.db"

    async def token() -> str:
        store = SQLiteStore(db)
        try:
            return (await store.approvers.add("bench", ["invoke"])).token
        finally:
            await store.close()

    issued = asyncio.run(token())
    port = _port()
    source = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), source])),
        "TETHER_BENCH_STORE": str(db),
    }
    args = [TETHER, "serve", "--store", str(db), "--port", str(port)]
    proc = subprocess.Popen(
        [*args, "--app", "_a2a_app:agent_factory"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, proc)
        yield url, issued
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@asynccontextmanager
async def _client(url: str, token: str | None, limit: int) -> AsyncIterator[Client]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    # idle connections are dropped before the server's 5 s keep-alive closes them
    limits = httpx.Limits(
        max_connections=limit, max_keepalive_connections=limit, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(
        headers=headers, timeout=120, trust_env=False, limits=limits
    ) as http:
        client = await ClientFactory(
            ClientConfig(httpx_client=http, streaming=False)
        ).create_from_url(url)
        yield client


async def _one(client: Client, i: int) -> float:
    message = Message(message_id=f"m{i}", role=Role.ROLE_USER, parts=[Part(text=f"task {i}")])
    started = time.perf_counter()
    events = [e async for e in client.send_message(SendMessageRequest(message=message))]
    took = time.perf_counter() - started
    if events[-1].task.status.state != TaskState.TASK_STATE_COMPLETED:
        raise RuntimeError(f"task {i} did not complete: {events[-1]}")
    return took


async def _sequential(url: str, token: str | None, tasks: int) -> list[float]:
    async with _client(url, token, 1) as client:
        for i in range(5):  # warm up: connections, imports, the first SQLite pages
            await _one(client, -i - 1)
        return [await _one(client, i) for i in range(tasks)]


async def _concurrent(url: str, token: str | None, callers: int, total: int) -> float:
    async with _client(url, token, callers) as client:
        await _one(client, -1)
        queue = iter(range(total))

        async def caller() -> None:
            for i in queue:
                await _one(client, i)

        started = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(callers)))
        return total / (time.perf_counter() - started)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]  # nearest rank


def a2a_latency(tasks: int = 200) -> dict[str, float]:
    """Milliseconds per A2A task, one at a time: tether serve against the bare SDK."""
    with tempfile.TemporaryDirectory() as tmp:
        with bare_server() as (url, token):
            bare = asyncio.run(_sequential(url, token, tasks))
        with tether_server(Path(tmp)) as (url, token):
            ours = asyncio.run(_sequential(url, token, tasks))
    b, t = statistics.median(bare) * 1e3, statistics.median(ours) * 1e3
    return {
        "bare_p50_ms": b,
        "bare_p90_ms": _p(bare, 0.9) * 1e3,
        "tether_p50_ms": t,
        "tether_p90_ms": _p(ours, 0.9) * 1e3,
        "added_ms": t - b,
        "ratio": t / b,
    }


def a2a_throughput(callers: int = 100, total: int = 1000) -> dict[str, float]:
    """Tasks per second with ``callers`` concurrent A2A callers."""
    with tempfile.TemporaryDirectory() as tmp:
        with bare_server() as (url, token):
            bare = asyncio.run(_concurrent(url, token, callers, total))
        with tether_server(Path(tmp)) as (url, token):
            ours = asyncio.run(_concurrent(url, token, callers, total))
    return {"bare_tasks_per_s": bare, "tether_tasks_per_s": ours, "ratio": bare / ours}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--callers", type=int, default=100)
    parser.add_argument("--total", type=int, default=1000)
    parser.add_argument("--ag-ui-runs", type=int, default=200)
    args = parser.parse_args()
    latency = a2a_latency(args.tasks)
    print(
        f"A2A, one task at a time ({args.tasks}): bare a2a-sdk p50 {latency['bare_p50_ms']:.2f} ms "
        f"(p90 {latency['bare_p90_ms']:.2f}), tether serve p50 {latency['tether_p50_ms']:.2f} ms "
        f"(p90 {latency['tether_p90_ms']:.2f}): +{latency['added_ms']:.2f} ms, "
        f"x{latency['ratio']:.2f}"
    )
    rate = a2a_throughput(args.callers, args.total)
    print(
        f"A2A, {args.callers} concurrent callers, {args.total} tasks: bare a2a-sdk "
        f"{rate['bare_tasks_per_s']:.0f} tasks/s, tether serve {rate['tether_tasks_per_s']:.0f} "
        f"tasks/s (bare / tether x{rate['ratio']:.2f})"
    )
    from ag_ui_first_event import report  # bench/ is the script's directory

    report(args.ag_ui_runs)


if __name__ == "__main__":
    main()
