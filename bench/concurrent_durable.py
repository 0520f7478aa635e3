"""Many durable agents sharing one SQLiteStore in one process: the event loop's longest
stall and the throughput (issue 11, goal 3).

Usage: `.venv/bin/python bench/concurrent_durable.py [--agents 1000] [--invocations 3]
[--json PATH]` (`--quick`: 100 agents).

Setup: one `SQLiteStore` file (WAL) in a temp dir; `--agents` Agents, each on its own
session, all with the store, the O(1) fake model and the `async def add` tool of
bench/scaling.py (2 model calls + 1 tool call per invocation; the tool's intent is not
fsync'd: `add` is idempotent here, so the row measures the store's transactions, not
the disk's fsync). All agents run `--invocations` invocations one after another,
concurrently with each other (`asyncio.gather`), while a ticker coroutine sleeps 1 ms
in a loop and records how late each wake-up is. Reported: invocations per second
(all invocations / wall time), the ticker's longest and p99 lateness (the loop's
stall), and the store's group commits when the store has them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scaling import PROMPT, FlatModel
from tether import Agent, tool
from tether.durable import SQLiteStore


@tool(idempotent=True)
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def run(agents: int, invocations: int, folder: Path) -> dict[str, Any]:
    store = SQLiteStore(folder / "many.db")
    crew = [
        Agent(model=FlatModel(), tools=[add], store=store, session_id=f"s{i}")
        for i in range(agents)
    ]
    lateness: list[float] = []
    running = True

    async def ticker() -> None:
        while running:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            lateness.append(time.perf_counter() - start - 0.001)

    async def work(agent: Agent) -> None:
        for _ in range(invocations):
            result = await agent.invoke_async(PROMPT)
            assert result.stop_reason == "end_turn", result.stop_reason

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    await asyncio.gather(*(work(a) for a in crew))
    wall = time.perf_counter() - start
    running = False
    await tick
    threads = getattr(store, "_threads", None)
    commits = getattr(threads, "commits", None)
    await store.close()
    lateness.sort()
    return {
        "agents": agents,
        "invocations": agents * invocations,
        "wall_s": wall,
        "invocations_per_s": agents * invocations / wall,
        "longest_stall_ms": lateness[-1] * 1000,
        "p99_stall_ms": lateness[int(len(lateness) * 0.99)] * 1000,
        "group_commits": commits,
        "ticks": len(lateness),
        "ticks_over_20ms": sum(1 for x in lateness if x > 0.020),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--agents", type=int, default=1000)
    parser.add_argument("--invocations", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100 agents")
    parser.add_argument("--json", type=str, default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.agents = 100
    with tempfile.TemporaryDirectory() as folder:
        result = asyncio.run(run(args.agents, args.invocations, Path(folder)))
    print(
        f"{result['agents']} durable agents x {args.invocations} invocations, one SQLiteStore: "
        f"{result['invocations_per_s']:.0f} invocations/s, longest loop stall "
        f"{result['longest_stall_ms']:.1f} ms (p99 {result['p99_stall_ms']:.1f} ms), "
        f"{result['ticks_over_20ms']} of {result['ticks']} ticks late by over 20 ms; "
        f"group commits {result['group_commits']}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
