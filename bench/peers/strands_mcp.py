"""Strands' MCP client on the MCP fixture server (run with bench/.venvs/strands/bin/python).

Usage: strands_mcp.py TRANSPORT (stdio|http) TARGET CALLS WARMUP, where TARGET is the
python that runs the fixture server (stdio) or the server's URL (http).

Setup: `strands.tools.mcp.MCPClient` over the mcp SDK's stdio_client / streamable
HTTP (`url=`), started with `with client:` (its own background thread and loop, as
tether's MCPServer), then per call `await client.call_tool_async(id, "echo",
{"text": "hi"})` from one asyncio loop in the main thread: the same hop to a
connection thread, Strands' result mapping, no agent. Prints one JSON line:
median_us, p99_us (perf_counter_ns per call, gc.collect() before the timed block).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

from mcp.client.stdio import stdio_client
from strands.tools.mcp import MCPClient

from mcp import StdioServerParameters

FIXTURE = str(Path(__file__).resolve().parents[2] / "tests" / "support" / "mcp_fixture_server.py")
ARGS = {"text": "hi"}


async def _time(client: MCPClient, calls: int, warmup: int) -> list[int]:
    for i in range(warmup):
        result = await client.call_tool_async(f"w{i}", "echo", ARGS)
        assert result["status"] == "success", result
    gc.collect()
    samples = []
    for i in range(calls):
        start = time.perf_counter_ns()
        await client.call_tool_async(f"c{i}", "echo", ARGS)
        samples.append(time.perf_counter_ns() - start)
    return samples


def main() -> None:
    transport, target, calls, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if transport == "stdio":
        params = StdioServerParameters(command=target, args=[FIXTURE, "stdio"])
        devnull = open(os.devnull, "w")  # noqa: SIM115 - the server's stderr, for the run
        client = MCPClient(lambda: stdio_client(params, errlog=devnull))
    else:
        client = MCPClient(url=target)
    with client:
        names = [t.tool_name for t in client.list_tools_sync()]
        assert "echo" in names, names
        samples = sorted(asyncio.run(_time(client, calls, warmup)))
    p99 = samples[min(len(samples) - 1, max(0, round(0.99 * len(samples)) - 1))]
    print(
        json.dumps(
            {
                "median_us": statistics.median(samples) / 1000,
                "p99_us": p99 / 1000,
                "strands": version("strands-agents"),
                "mcp": version("mcp"),
            }
        )
    )


if __name__ == "__main__":
    main()
