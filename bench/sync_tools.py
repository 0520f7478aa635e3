"""Per-invocation cost of a sync tool vs the same tool as `async def` (issue 11, goal 6).

Usage: `.venv/bin/python bench/sync_tools.py [--invocations 2000] [--repeats 5] [--json PATH]`.

One invocation: a prompt, 2 model calls (an instant in-process fake) and 1 tool call
`add(a=1, b=2)`. Two agents, identical except the tool: `async def add` (runs on the
loop) and `def add` (tether hands it to a worker thread). Both run in this process,
interleaved repeat by repeat so load on the machine hits both alike; each repeat times
`--invocations` invocations one by one (`perf_counter_ns` around `agent.reset()` +
`await agent.invoke_async(...)`) after 100 warm-up ones. Reported: per row the median
over repeats of each repeat's median, in microseconds, and the ratio sync / async
(target <= 1.2x).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from typing import Any

from tether import Agent, tool
from tether.models import ScriptedModel

PROMPT = "What is 1 + 2?"
ANSWER = "The answer is 3."


def script(messages: Any, tools: Any) -> dict[str, Any]:
    if messages[-1].role == "tool":
        return {"text": ANSWER}
    return {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}


@tool(name="add")
async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(name="add")
def add_sync(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def _block(agent: Agent, n: int) -> list[int]:
    out: list[int] = []
    for _ in range(n):
        start = time.perf_counter_ns()
        agent.reset()
        result = await agent.invoke_async(PROMPT)
        out.append(time.perf_counter_ns() - start)
        assert result.text == ANSWER, result.text
    return out


async def run(invocations: int, repeats: int) -> dict[str, Any]:
    agents = {
        "async": Agent(model=ScriptedModel(script), tools=[add_async]),
        "sync": Agent(model=ScriptedModel(script), tools=[add_sync]),
    }
    medians: dict[str, list[float]] = {name: [] for name in agents}
    for agent in agents.values():
        await _block(agent, 100)
    for _ in range(repeats):
        for name, agent in agents.items():
            gc.collect()
            times = await _block(agent, invocations)
            medians[name].append(statistics.median(times) / 1000)
    for agent in agents.values():
        agent.close()
    row = {name: statistics.median(values) for name, values in medians.items()}
    return {"us": row, "ratio": row["sync"] / row["async"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="300 invocations x 3 repeats")
    parser.add_argument("--json", type=str, default=None)
    args = parser.parse_args(argv)
    if args.quick:
        args.invocations, args.repeats = 300, 3
    result = asyncio.run(run(args.invocations, args.repeats))
    print("| tool | per invocation (us) |")
    print("|---|---|")
    for name, us in result["us"].items():
        print(f"| {name} def add | {us:.1f} |")
    print(f"\nsync / async: {result['ratio']:.2f}x (target <= 1.2x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
