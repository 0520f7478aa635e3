"""Shared by the durability runners (stdlib only: the LangGraph venv has no tether).

Each runner measures one framework on a file SQLite database in a fresh temp
directory and prints ONE JSON line on stdout. The scenario constants live here
so both sides run the same workload; see bench/durability.py for what is timed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

MESSAGE_CHARS = 300
"""(a) new content per step: one ~300-character message."""
GROW_CHARS = 200
"""(c) the state grows by this many characters per step."""
clock = time.perf_counter_ns


def text(n: int, step: int) -> str:
    """Deterministic ``n``-character filler for step ``step`` (no compression tricks)."""
    base = f"step {step:05d} " + "abcdefghijklmnopqrstuvwxyz0123456789" * (n // 36 + 1)
    return base[:n]


def latency(samples_ns: list[int]) -> dict[str, float]:
    """p50, nearest-rank p99, mean and max of per-step samples, in milliseconds."""
    s = sorted(samples_ns)
    p99 = s[max(0, math.ceil(0.99 * len(s)) - 1)]
    return {
        "n": len(s),
        "p50_ms": statistics.median(s) / 1e6,
        "p99_ms": p99 / 1e6,
        "mean_ms": statistics.fmean(s) / 1e6,
        "max_ms": s[-1] / 1e6,
    }


def trials(samples_ns: list[int]) -> dict[str, Any]:
    """Median, min and max of resume trials, in milliseconds."""
    return {
        "n": len(samples_ns),
        "median_ms": statistics.median(samples_ns) / 1e6,
        "min_ms": min(samples_ns) / 1e6,
        "max_ms": max(samples_ns) / 1e6,
    }


def per_step(steps: int, payload: int, path: str) -> dict[str, Any]:
    """Bytes per step: stored payload (sum of column lengths) and the compacted file."""
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
    finally:
        con.close()
    size = os.path.getsize(path)
    return {
        "steps": steps,
        "payload_bytes": payload,
        "payload_per_step": payload / steps,
        "file_bytes": size,
        "file_per_step": size / steps,
    }


def sql_sum(path: str, query: str) -> int:
    """One integer from ``query`` (a ``sum(length(CAST(col AS BLOB)))``) on ``path``."""
    con = sqlite3.connect(path)
    try:
        return int(con.execute(query).fetchone()[0] or 0)
    finally:
        con.close()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run one framework's durability workload.")
    p.add_argument("--steps", type=int, default=500, help="(a) loop steps timed")
    p.add_argument("--history", type=int, default=50, help="(b) steps before the suspension")
    p.add_argument("--trials", type=int, default=25, help="(b) resume trials")
    p.add_argument("--grow-steps", type=int, default=100, help="(c) steps of a growing state")
    p.add_argument("--dir", help="where the databases go (default: a new temp directory)")
    return p.parse_args(argv)


def main(measure: Callable[[argparse.Namespace, str], dict[str, Any]]) -> None:
    """Entry point of a runner: measure in a fresh directory, print one JSON line."""
    args = parse()
    work = tempfile.mkdtemp(prefix="tether-durability-", dir=args.dir)
    try:
        out = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    out["sqlite"] = sqlite3.sqlite_version
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
