"""Many durable agents sharing one SQLiteStore in one process: the event loop's longest
stall and the throughput (issue 11, goal 3).

Usage: `.venv/bin/python bench/concurrent_durable.py [--agents 1000] [--invocations 2]
[--json PATH]` (`--quick`: 100 agents).

Setup per row, each in a fresh process: one `SQLiteStore` file (WAL) in a temp dir;
`--agents` Agents, each on its own session, all with that store, the O(1) fake model of
bench/scaling.py and an `async def add` tool (2 model calls + 1 tool call per
invocation). All agents run `--invocations` invocations one after another, concurrently
with each other (`asyncio.gather`), while a ticker coroutine sleeps 1 ms in a loop and
records how late each wake-up is. Reported: invocations per second (all invocations /
wall time), the ticker's longest and p99 lateness (the loop's stall), the longest pause
of CPython's cyclic garbage collector in the window (`gc.callbacks`), and the store's
group commits.

Rows (the same code; only what the row names differs):
- `store`: `threads` (this build: calls on the store's writer and reader threads, group
  commits) or `inline` (every call runs on the event loop's thread, as SQLiteStore did
  before: the bench marks the loop's thread as a store thread, so the calls run where
  they are awaited, each in its own transaction).
- `tool`: `idempotent` (its intent is not fsync'd) or `default` (not idempotent: its
  intent commits with an fsync before it runs).
- `gc`: `on` (CPython's defaults) or `paused` (`gc.disable()` for the measured window,
  to tell the collector's pauses from the store's).
- `fsync`: the disk as it is, or `slow` (every fsync/fdatasync of the process made
  2 ms slower by an LD_PRELOAD shim built here with the system C compiler, the fsync
  latency of a network or cloud volume; skipped when no compiler is found).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scaling import PROMPT, FlatModel
from tether import Agent, tool
from tether.durable import SQLiteStore

HERE = Path(__file__).resolve().parent
SLOW_FSYNC_US = 2000
SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
static void slower(void) {
    const char *v = getenv("SLOW_FSYNC_US");
    long us = v ? atol(v) : 0;
    if (us > 0) { struct timespec t = {us / 1000000, (us % 1000000) * 1000}; nanosleep(&t, 0); }
}
int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    slower();
    return real(fd);
}
int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    slower();
    return real(fd);
}
"""


@tool(idempotent=True)
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="add")
async def add_once(a: int, b: int) -> int:
    """Add two integers (not idempotent: its intent is fsync'd before it runs)."""
    return a + b


async def run_row(
    agents: int, invocations: int, folder: Path, row: dict[str, str]
) -> dict[str, Any]:
    if row["store"] == "inline":
        from tether.durable.sqlite import threads as sqlite_io

        sqlite_io._local.store_thread = True  # calls run where they are awaited: the loop
    store = SQLiteStore(folder / "many.db")
    chosen = add if row["tool"] == "idempotent" else add_once
    crew = [
        Agent(model=FlatModel(), tools=[chosen], store=store, session_id=f"s{i}")
        for i in range(agents)
    ]
    lateness: list[float] = []
    pauses: list[float] = []
    running = True
    began = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
        elif info["generation"] == 2:
            pauses.append(time.perf_counter() - began[0])

    async def ticker() -> None:
        while running:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            lateness.append(time.perf_counter() - start - 0.001)

    async def work(agent: Agent) -> None:
        for _ in range(invocations):
            result = await agent.invoke_async(PROMPT)
            assert result.stop_reason == "end_turn", result.stop_reason

    gc.collect()
    if row["gc"] == "paused":
        gc.disable()
    gc.callbacks.append(on_gc)
    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await asyncio.gather(*(work(a) for a in crew))
    wall = time.perf_counter() - start
    running = False
    await tick
    gc.callbacks.remove(on_gc)
    gc.enable()
    threads = getattr(store, "_threads", None)
    commits = getattr(threads, "commits", None)
    await store.close()
    lateness.sort()
    return {
        **row,
        "agents": agents,
        "invocations": agents * invocations,
        "wall_s": wall,
        "invocations_per_s": agents * invocations / wall,
        "longest_stall_ms": lateness[-1] * 1000,
        "p99_stall_ms": lateness[int(len(lateness) * 0.99)] * 1000,
        "ticks": len(lateness),
        "ticks_over_20ms": sum(1 for x in lateness if x > 0.020),
        "gen2_collections": len(pauses),
        "longest_gen2_ms": max(pauses, default=0.0) * 1000,
        "group_commits": commits,
    }


def build_shim(folder: Path) -> Path | None:
    """The slow-fsync shim, or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    source = folder / "slowsync.c"
    source.write_text(SHIM)
    library = folder / "slowsync.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"], check=True
    )
    return library


def child(args: argparse.Namespace) -> int:
    row = dict(part.split("=", 1) for part in args.row.split(","))
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(run_row(args.agents, args.invocations, Path(folder), row))
    print(json.dumps(result))
    return 0


def measure(args: argparse.Namespace, row: dict[str, str], shim: Path | None) -> dict[str, Any]:
    env = dict(os.environ)
    if row["fsync"] == "slow":
        assert shim is not None
        env["LD_PRELOAD"] = str(shim)
        env["SLOW_FSYNC_US"] = str(SLOW_FSYNC_US)
    spec = ",".join(f"{k}={v}" for k, v in row.items())
    argv = [sys.executable, str(Path(__file__).resolve()), "--row", spec]
    argv += ["--agents", str(args.agents), "--invocations", str(args.invocations)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"row {spec} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--invocations", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="100 agents")
    parser.add_argument("--json", type=str, default=None)
    parser.add_argument("--row", help=argparse.SUPPRESS)  # internal: one row, in this process
    args = parser.parse_args(argv)
    if args.quick:
        args.agents = 100
    if args.row:
        return child(args)
    rows = [
        {"store": store, "tool": tool_kind, "gc": collector, "fsync": "disk"}
        for tool_kind in ("idempotent", "default")
        for collector in ("on", "paused")
        for store in ("inline", "threads")
    ]
    with tempfile.TemporaryDirectory() as folder:
        shim = build_shim(Path(folder))
        if shim is not None:
            rows += [
                {"store": store, "tool": "default", "gc": "on", "fsync": "slow"}
                for store in ("inline", "threads")
            ]
        else:
            print("no C compiler: the slow-fsync rows are skipped")
        results = [measure(args, row, shim) for row in rows]
    print(
        f"{args.agents} durable agents x {args.invocations} invocations, one SQLiteStore "
        f"(slow fsync: +{SLOW_FSYNC_US / 1000:g} ms per fsync)"
    )
    print(
        f"{'store':8} {'tool':11} {'gc':7} {'fsync':6} {'inv/s':>7} {'stall ms':>9} "
        f"{'p99 ms':>7} {'>20ms':>6} {'gen2 max ms':>12} {'commits':>8}"
    )
    for r in results:
        print(
            f"{r['store']:8} {r['tool']:11} {r['gc']:7} {r['fsync']:6} "
            f"{r['invocations_per_s']:7.0f} {r['longest_stall_ms']:9.1f} {r['p99_stall_ms']:7.1f} "
            f"{r['ticks_over_20ms']:6d} {r['longest_gen2_ms']:12.1f} {r['group_commits'] or '-':>8}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
