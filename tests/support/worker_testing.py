"""Helpers of the worker tests: suspended sessions from real runs, worker processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from worker_app import agent_factory

from tether.durable import Store

SUPPORT = Path(__file__).parent
TETHER = str(Path(sys.executable).with_name("tether"))
APP = "worker_app:agent_factory"


def env(store_url: str, out: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        # the support modules, then whatever tether source the tests run against
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SUPPORT), os.environ.get("PYTHONPATH")])),
        "TETHER_WORKER_STORE": store_url,
        "TETHER_WORKER_OUT": str(out),
        "COLUMNS": "200",
        "NO_COLOR": "1",
        **extra,
    }


async def suspend(store: Store, session_ids: list[str], batch: int = 25) -> None:
    """Run each session until its first tool call asks for approval (real runs)."""
    for start in range(0, len(session_ids), batch):
        agents = [agent_factory(sid, store=store) for sid in session_ids[start : start + batch]]
        results = await asyncio.gather(*(a.invoke_async("go") for a in agents))
        for agent in agents:
            agent.close()
        assert all(r.stop_reason == "interrupt" for r in results)


async def approve(store: Store, session_ids: list[str] | None = None) -> int:
    pending = await store.approvals.pending(limit=100_000)
    chosen = [a for a in pending if session_ids is None or a.session_id in session_ids]
    for approval in chosen:
        await store.approvals.decide(approval.id, "approve", decided_by="tester")
    return len(chosen)


async def wait_for(check: Any, seconds: float, what: str, every: float = 0.1) -> Any:
    """Poll the coroutine function ``check`` until it returns something truthy."""
    deadline = time.monotonic() + seconds
    while True:
        found = await check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        await asyncio.sleep(every)


@contextmanager
def workers(cmds: list[list[str]], environ: dict[str, str], logs: Path) -> Iterator[list[Any]]:
    """Start worker processes (stdout to files); kill whatever is left on exit."""
    procs: list[subprocess.Popen[str]] = []
    try:
        for i, cmd in enumerate(cmds):
            log = (logs / f"worker{i}.log").open("w")
            procs.append(
                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=environ, text=True)
            )
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


def worker_cmd(store_url: str, *extra: str, host: str | None = None) -> list[str]:
    args = ["--app", APP, "--store", store_url, *extra]
    if host is not None:
        return [sys.executable, str(SUPPORT / "worker_child.py"), host, *args]
    return [TETHER, "worker", *args]


def stop(proc: subprocess.Popen[str], timeout: float = 20.0) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=timeout)


def lines(out: Path) -> list[str]:
    return out.read_text().splitlines() if out.exists() else []


def pg_url(dsn: str) -> str:
    """A ``postgresql://`` URL (what ``--store`` takes) for a libpq conninfo string."""
    from urllib.parse import quote, urlencode

    from psycopg.conninfo import conninfo_to_dict

    info = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    user = quote(info.pop("user", ""))
    dbname = quote(info.pop("dbname", ""))
    return f"postgresql://{user}@/{dbname}?{urlencode(info)}"


def alive(procs: list[Any]) -> None:
    dead = [p.returncode for p in procs if p.poll() is not None]
    assert not dead, f"worker(s) exited early with {dead}"
