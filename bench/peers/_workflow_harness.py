"""What the workflow runners share (stdlib only: the peers' venvs have no tether).

The graph, in every framework: ``plan`` -> (``a``, ``b`` at once) -> ``join`` (waits for
both) -> ``final``: five nodes, four supersteps, each node an agent answering with one
instant scripted model call. Timed unit: one invocation on a fresh thread / session,
``time.perf_counter_ns`` around it; reported: the median per node (invocation / 5), and
with SQLite the bytes the run's checkpoints / journal hold, per superstep.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

NODES = ("plan", "a", "b", "join", "final")
EDGES = (("plan", "a"), ("plan", "b"), ("a", "join"), ("b", "join"), ("join", "final"))
SUPERSTEPS = 4
PROMPT = "Write the release notes."


def reply(node: str) -> str:
    """What node ``node``'s scripted model answers (about 200 characters)."""
    return f"{node}: " + "notes " * 32


def args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--invocations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--db", default="")
    return parser.parse_args()


def measure(
    invoke: Callable[[int], Awaitable[Any]],
    ns: argparse.Namespace,
    framework: str,
    version: str,
    size: Callable[[], int] | None = None,
    check: Callable[[Any], None] | None = None,
) -> None:
    """Run the warm-ups and the timed invocations (``invoke(i)``: invocation i on its own
    session), print one JSON line."""

    async def main() -> list[int]:
        times: list[int] = []
        for i in range(ns.warmup + ns.invocations):
            start = time.perf_counter_ns()
            out = await invoke(i)
            elapsed = time.perf_counter_ns() - start
            if check is not None:
                check(out)
            if i >= ns.warmup:
                times.append(elapsed)
        return times

    times = asyncio.run(main())
    row: dict[str, Any] = {
        "framework": framework,
        "version": version,
        "mode": ns.mode,
        "invocations": ns.invocations,
        "us_per_node": statistics.median(times) / 1000 / len(NODES),
    }
    if size is not None:
        total = ns.warmup + ns.invocations
        row["bytes_per_step"] = size() / total / SUPERSTEPS
    print(json.dumps(row), flush=True)
