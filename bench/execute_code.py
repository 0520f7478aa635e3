"""execute_code's per-call overhead against a plain tool call (issue 25; to fold into
bench/memory.py as ``execute_code_overhead``).

Usage: `.venv/bin/python bench/execute_code.py [--invocations 300] [--repeats 5] [--json PATH]`.

Four agents on an instant in-process fake model, each invocation 2 model calls:
``plain-1`` calls ``add`` once; ``plain-10`` calls it 10 times in one turn; ``code-1``
runs one execute_code program making 1 ``add`` call; ``code-10`` one program making
10. Interleaved repeat by repeat; each repeat times ``--invocations`` invocations
(``agent.reset()`` + ``await agent.invoke_async``) after 20 warm-up ones. Reported (median
over repeats of each repeat's median, µs): a program's fixed cost (code-1 - plain-1: a
worker session, the program's thread, the outer call), the marginal cost of one call
made by a program ((code-10 - code-1) / 9) and of one plain call ((plain-10 - plain-1) / 9),
and their ratio.
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
from tether.tools import execute_code

ANSWER = "done"


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _script(calls: list[dict[str, Any]]) -> Any:
    def turn(messages: Any, tools: Any) -> dict[str, Any]:
        if messages[-1].role == "tool":
            return {"text": ANSWER}
        return {"tool_calls": calls}

    return turn


def agents() -> dict[str, Agent]:
    plain = [{"name": "add", "args": {"a": i, "b": 1}} for i in range(10)]
    one = "add(0, 1)"
    ten = "for i in range(10):\n    add(i, 1)"
    return {
        "plain-1": Agent(model=ScriptedModel(_script(plain[:1])), tools=[add]),
        "plain-10": Agent(model=ScriptedModel(_script(plain)), tools=[add]),
        "code-1": Agent(
            model=ScriptedModel(_script([{"name": "execute_code", "args": {"code": one}}])),
            tools=[execute_code(tools=[add])],
        ),
        "code-10": Agent(
            model=ScriptedModel(_script([{"name": "execute_code", "args": {"code": ten}}])),
            tools=[execute_code(tools=[add])],
        ),
    }


async def _block(agent: Agent, n: int) -> list[int]:
    out: list[int] = []
    for _ in range(n):
        start = time.perf_counter_ns()
        agent.reset()
        result = await agent.invoke_async("go")
        out.append(time.perf_counter_ns() - start)
        assert result.text == ANSWER, result.text
    return out


async def execute_code_overhead(invocations: int = 300, repeats: int = 5) -> dict[str, Any]:
    """The table's numbers (µs), for bench/memory.py."""
    made = agents()
    medians: dict[str, list[float]] = {name: [] for name in made}
    for agent in made.values():
        await _block(agent, 20)
    for _ in range(repeats):
        for name, agent in made.items():
            gc.collect()
            medians[name].append(statistics.median(await _block(agent, invocations)) / 1000)
    for agent in made.values():
        agent.close()
    us = {name: statistics.median(values) for name, values in medians.items()}
    inner = (us["code-10"] - us["code-1"]) / 9
    plain = (us["plain-10"] - us["plain-1"]) / 9
    return {
        "us": us,
        "program_fixed_us": us["code-1"] - us["plain-1"],
        "per_call_in_program_us": inner,
        "per_plain_call_us": plain,
        "ratio": inner / plain if plain > 0 else float("inf"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    out = asyncio.run(execute_code_overhead(args.invocations, args.repeats))
    for name, value in out["us"].items():
        print(f"{name:10} {value:9.1f} µs per invocation")
    print(f"a program's fixed cost        {out['program_fixed_us']:9.1f} µs")
    print(f"one call made by a program    {out['per_call_in_program_us']:9.1f} µs")
    print(f"one plain tool call           {out['per_plain_call_us']:9.1f} µs")
    print(f"ratio (program call / plain)  {out['ratio']:9.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
