"""Per-call overhead of an MCP tool through tether versus the bare mcp client session.

Usage: `.venv/bin/python bench/mcp_overhead.py [--quick] [--calls 2000] [--warmup 100]
[--repeats 3] [--json PATH]`. `--quick`: 200 calls, 20 warm-up, 1 repeat (well under
a minute).

The server is the SDK-written fixture (tests/support/mcp_fixture_server.py), tool
`echo(text)` (read-only, plain text result), over stdio and over streamable HTTP on
127.0.0.1. One asyncio loop per row, rows one after another, each with its own
server process. Timed per call with perf_counter_ns; reported: median and p99 in
microseconds (median over repeats), and ratios to the bare session.

Rows, for each transport:
- bare: `await session.call_tool("echo", {"text": "hi"})` on an mcp ClientSession
  opened in the timing loop (the floor: JSON-RPC + the server's work).
- tether tool: `await tool.invoke(tool.prepare({"text": "hi"}))` on the MCPTool
  (argument validation against the JSON schema, the hop to the connection's own
  thread and loop, result mapping).
- tether agent: one `agent.invoke_async` whose ScriptedModel calls `echo` once then
  answers, minus the same invocation with a Python `echo` tool measured in the same
  row: what an MCP tool adds to an agent step (hooks, journaling off: store=None).
- Strands client: `await client.call_tool_async(id, "echo", {"text": "hi"})` on
  Strands' `MCPClient` (its own background thread, like tether's connection), run by
  bench/peers/strands_mcp.py in bench/.venvs/strands (strands-agents==1.62.0 and the
  mcp SDK it resolves), on the same fixture server (started with this python). The
  peer to compare with "tether tool". `--no-strands` leaves the row out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from _runs import PEERS, STRANDS, ensure_venv, log

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = str(ROOT / "tests" / "support" / "mcp_fixture_server.py")
ARGS = {"text": "hi"}
DEVNULL = open(os.devnull, "w")  # noqa: SIM115 - the bare rows' server stderr, for the whole run


def _stats(samples: list[int]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))]
    return {"median_us": statistics.median(ordered) / 1000, "p99_us": p99 / 1000}


async def _time(call: Callable[[], Awaitable[Any]], calls: int, warmup: int) -> dict[str, float]:
    for _ in range(warmup):
        await call()
    gc.collect()
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await call()
        samples.append(time.perf_counter_ns() - start)
    return _stats(samples)


@contextlib.asynccontextmanager
async def _bare_session(transport: str, url: str | None) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client

    from mcp import ClientSession, StdioServerParameters, stdio_client

    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=[FIXTURE, "stdio"])
        opened = stdio_client(params, errlog=DEVNULL)
    else:
        assert url is not None
        opened = streamable_http_client(url)
    async with opened as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _server(transport: str, url: str | None) -> Any:
    from tether.mcp import MCPServer

    if transport == "stdio":
        return MCPServer.stdio(sys.executable, [FIXTURE, "stdio"])
    assert url is not None
    return MCPServer.http(url)


async def _row(
    kind: str, transport: str, url: str | None, calls: int, warmup: int
) -> dict[str, float]:
    if kind == "bare":
        async with _bare_session(transport, url) as session:
            return await _time(lambda: session.call_tool("echo", ARGS), calls, warmup)
    server = _server(transport, url)
    try:
        tool = {t.name: t for t in server.tools()}["echo"]
        if kind == "tether tool":
            return await _time(lambda: tool.invoke(tool.prepare(ARGS)), calls, warmup)
        return await _agent_delta(tool, calls, warmup)
    finally:
        server.close()


def _strands_row(transport: str, url: str | None, calls: int, warmup: int) -> dict[str, float]:
    target = sys.executable if transport == "stdio" else url
    assert target is not None
    cmd = [str(STRANDS.python), str(PEERS / "strands_mcp.py"), transport, target]
    out = subprocess.run(
        [*cmd, str(calls), str(warmup)], capture_output=True, text=True, timeout=600, check=False
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr.strip() or "no output").splitlines()[-1]
        raise RuntimeError(f"the Strands MCP runner failed (exit {out.returncode}): {tail}")
    result: dict[str, float] = json.loads(lines[-1])
    return {"median_us": float(result["median_us"]), "p99_us": float(result["p99_us"])}


async def _agent_delta(mcp_tool: Any, calls: int, warmup: int) -> dict[str, float]:
    from tether import Agent, tool
    from tether.models import ScriptedModel

    def script(messages: list[Any], specs: list[Any]) -> Any:
        return (
            {"tool_calls": [{"name": "echo", "args": ARGS}]}
            if messages[-1].role == "user"
            else "ok"
        )

    @tool(name="echo", read_only=True)
    async def echo(text: str) -> str:
        """Return the text."""
        return text

    timed = {}
    for label, tools in (("mcp", [mcp_tool]), ("python", [echo])):
        agent = Agent(ScriptedModel(script), tools=tools, store=None)

        async def once(agent: Agent = agent) -> None:
            agent.reset()
            await agent.invoke_async("go")

        timed[label] = await _time(once, calls, warmup)
    return {
        "median_us": timed["mcp"]["median_us"] - timed["python"]["median_us"],
        "p99_us": timed["mcp"]["p99_us"] - timed["python"]["p99_us"],
        "agent_python_median_us": timed["python"]["median_us"],
        "agent_mcp_median_us": timed["mcp"]["median_us"],
    }


@contextlib.contextmanager
def _http_server() -> Any:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, FIXTURE, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the fixture HTTP server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-strands", action="store_true", help="leave out the Strands row")
    options = parser.parse_args()
    if options.quick:
        options.calls, options.warmup, options.repeats = 200, 20, 1
    kinds = ["bare", "tether tool", "tether agent"]
    if not options.no_strands:
        ensure_venv(STRANDS)
        kinds.insert(2, "Strands client")
    results: dict[str, dict[str, dict[str, float]]] = {}
    with _http_server() as url:
        for transport in ("stdio", "http"):
            for kind in kinds:
                log(f"{transport}: {kind} ...")
                reps = [
                    _strands_row(transport, url, options.calls, options.warmup)
                    if kind == "Strands client"
                    else asyncio.run(_row(kind, transport, url, options.calls, options.warmup))
                    for _ in range(options.repeats)
                ]
                results.setdefault(transport, {})[kind] = {
                    key: statistics.median(r[key] for r in reps) for key in reps[0]
                }
    print(
        f"MCP per-call overhead, {options.calls} calls x {options.repeats} repeat(s), microseconds"
    )
    print(f"{'transport':<10}{'row':<16}{'median':>10}{'p99':>10}{'/ bare':>9}{'/ Strands':>11}")
    for transport, rows in results.items():
        bare = rows["bare"]["median_us"]
        strands = rows.get("Strands client", {}).get("median_us")
        for kind, row in rows.items():
            agent = kind == "tether agent"
            ratio = "" if agent else f"{row['median_us'] / bare:.2f}"
            versus = "" if agent or strands is None else f"{row['median_us'] / strands:.2f}"
            label = "agent +MCP" if agent else kind
            print(
                f"{transport:<10}{label:<16}{row['median_us']:>10.1f}{row['p99_us']:>10.1f}"
                f"{ratio:>9}{versus:>11}"
            )
    print("'agent +MCP': agent invocation with the MCP echo minus the same with a Python echo")
    if options.json is not None:
        options.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
