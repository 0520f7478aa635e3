"""Streaming overhead of tether's OpenAI adapter vs iterating the raw SDK stream.

Usage: `.venv/bin/python bench/streaming.py [--chunks 1000 --runs 40]`.

A local Chat Completions server (bench/_stream_server.py, its own process on
127.0.0.1) streams `--chunks` text chunks plus a usage chunk. In one run, and
alternating so drift hits both equally, we time:
- raw: `AsyncOpenAI(max_retries=0).chat.completions.create(stream=True)` and
  `async for chunk in stream` reading `delta.content`;
- tether: `OpenAIModel(...).stream(request)` (retry loop, stale-stream
  watchdog, think-tag filter, normalization) consumed the same way;
- agent: `Agent(model=OpenAIModel(...)).stream(prompt)`, the whole loop.
Each run opens a new request on a warm client. Reported: p50 of time to the
first text (from the call, in ms), the overhead vs raw at p50, and p50 of the
total time, as throughput relative to raw (raw_total / total). Targets: <= 1 ms
added to first text, >= 90% throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import openai

from tether import Agent
from tether.events import TextDelta
from tether.messages import Message
from tether.models import OpenAIModel
from tether.models.base import ModelRequest

Run = Callable[[], Awaitable[tuple[float, float, int]]]


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = Path(__file__).with_name("_stream_server.py")
    proc = subprocess.Popen([sys.executable, str(script), str(port)])
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            urllib.request.urlopen(url + "/", timeout=1)
        except urllib.error.HTTPError:
            return proc, url  # up (404 on /)
        except OSError:
            time.sleep(0.025)
    proc.kill()
    raise RuntimeError("the bench server did not start")


def runners(url: str, chunks: int) -> dict[str, Run]:
    client = openai.AsyncOpenAI(api_key="bench", base_url=url + "/v1", max_retries=0)
    model = OpenAIModel(str(chunks), api_key="bench", base_url=url + "/v1")
    agent = Agent(model=model)
    request = ModelRequest([Message.user("go")], [])

    async def raw() -> tuple[float, float, int]:
        start = time.perf_counter()
        first = 0.0
        count = 0
        stream = await client.chat.completions.create(
            model=str(chunks),
            messages=[{"role": "user", "content": "go"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            for choice in chunk.choices:
                if choice.delta.content:
                    count += 1
                    if not first:
                        first = time.perf_counter()
        return first - start, time.perf_counter() - start, count

    async def through(events) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        first = 0.0
        count = 0
        async for event in events():
            if type(event) is TextDelta:
                count += 1
                if not first:
                    first = time.perf_counter()
        return first - start, time.perf_counter() - start, count

    async def adapter() -> tuple[float, float, int]:
        return await through(lambda: model.stream(request))

    async def loop() -> tuple[float, float, int]:
        agent.reset()
        return await through(lambda: agent.stream("go"))

    return {"raw SDK": raw, "tether model": adapter, "tether agent": loop}


async def measure(url: str, chunks: int, runs: int) -> dict[str, list[tuple[float, float, int]]]:
    rows = runners(url, chunks)
    for run in rows.values():  # warm-up: connections, imports, caches
        for _ in range(3):
            await run()
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in rows}
    for _ in range(runs):
        for name, run in rows.items():
            sample = await run()
            assert sample[2] == chunks, f"{name} saw {sample[2]} text events, expected {chunks}"
            results[name].append(sample)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    proc, url = start_server()
    try:
        results = asyncio.run(measure(url, args.chunks, args.runs))
    finally:
        proc.terminate()
        proc.wait()
    raw_first = statistics.median(s[0] for s in results["raw SDK"])
    raw_total = statistics.median(s[1] for s in results["raw SDK"])
    print(f"{args.chunks} chunks, {args.runs} alternating runs, p50 values")
    print(f"{'row':<14} {'first text ms':>14} {'added ms':>9} {'total ms':>9} {'throughput':>11}")
    for name, samples in results.items():
        first = statistics.median(s[0] for s in samples)
        total = statistics.median(s[1] for s in samples)
        print(
            f"{name:<14} {first * 1e3:>14.3f} {(first - raw_first) * 1e3:>9.3f} "
            f"{total * 1e3:>9.2f} {raw_total / total:>10.1%}"
        )


if __name__ == "__main__":
    main()
