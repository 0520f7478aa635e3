"""Instructions per plain invocation, counted with callgrind (load-independent).

Runs N plain invocations of the overhead bench's tether row (bench/peers/tether_overhead.py:
ScriptedModel, tool `add`, three no-op hooks; `agent.reset()` then `await
agent.invoke_async(...)` on one reused agent). Run it under callgrind for two values of N
and take the difference, which cancels start-up and imports:

    PYTHONPATH=$PWD/src valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        .venv/bin/python bench/callgrind_plain.py 50      # then again with 250

Per invocation = (Collected at 250 - Collected at 50) / 200 ("Collected" is the I refs
total valgrind prints). Run each twice to see the spread.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

from tether_overhead import _after_tool, _before_model, _before_tool, add, script

from tether import Agent
from tether.control import AfterToolCall, BeforeModelCall, BeforeToolCall
from tether.models import ScriptedModel


async def main(n: int) -> None:
    """Run n plain invocations on one agent, a fresh conversation each."""
    agent = Agent(model=ScriptedModel(script), tools=[add])
    agent.hooks.add(BeforeModelCall, _before_model)
    agent.hooks.add(BeforeToolCall, _before_tool)
    agent.hooks.add(AfterToolCall, _after_tool)
    for _ in range(n):
        agent.reset()
        await agent.invoke_async("What is 2 + 3?")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: callgrind_plain.py N")
    asyncio.run(main(int(sys.argv[1])))
