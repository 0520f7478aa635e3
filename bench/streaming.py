"""Streaming overhead of tether's model adapters vs iterating the raw SDK stream.

Usage: `.venv/bin/python bench/streaming.py [--chunks 1000 --runs 40]
[--providers openai,gemini,responses]` (default: all three).

A local server (bench/_stream_server.py, its own process on 127.0.0.1) streams
`--chunks` text chunks plus a closing chunk with usage, in three wire formats:
Chat Completions, Gemini `streamGenerateContent?alt=sse` and the Responses API
(`response.created`, `output_item.added`, N `output_text.delta`,
`output_item.done`, `response.completed`). Per provider we time:
- raw: the SDK's own stream, reading the text of each chunk:
  `AsyncOpenAI(max_retries=0).chat.completions.create(stream=True)` (`delta.content`),
  `genai.Client().aio.models.generate_content_stream` (`chunk.text`),
  `AsyncOpenAI(max_retries=0).responses.create(stream=True)`
  (`response.output_text.delta` events);
- tether: `OpenAIModel` / `GeminiModel` / `OpenAIResponsesModel` `.stream(request)`
  (retry loop, stale-stream watchdog, think-tag filter, normalization) consumed
  the same way;
- agent: `Agent(model=...).stream(prompt)`, the whole loop.
All rows of all providers alternate in one run, so drift hits each equally; each
run opens a new request on a warm client, after a `gc.collect()`. Reported: p50
of time to the first text (from the call, in ms), the overhead vs the provider's
raw row at p50, p50 of the total time, as throughput relative to raw
(raw_total / total), and p50 of this process's CPU time per stream (the server
is another process), as a share of raw's (raw_cpu / cpu): on a loaded machine
the wall-clock ratio moves with the neighbours, the CPU one much less.
Targets: <= 1 ms added to first text, >= 90% throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import openai

from tether import Agent
from tether.events import TextDelta
from tether.messages import Message
from tether.models import GeminiModel, OpenAIModel, OpenAIResponsesModel
from tether.models.base import ModelRequest
from tether.models.resilient import ProviderModel

Sample = tuple[float, float, int]
Run = Callable[[], Awaitable[Sample]]
PROVIDERS = ("openai", "gemini", "responses")


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


async def _through(events: Callable[[], AsyncIterator[object]]) -> Sample:
    start = time.perf_counter()
    first = 0.0
    count = 0
    async for event in events():
        if type(event) is TextDelta:
            count += 1
            if not first:
                first = time.perf_counter()
    return first - start, time.perf_counter() - start, count


def _tether_rows(model: ProviderModel) -> dict[str, Run]:
    agent = Agent(model=model)
    request = ModelRequest([Message.user("go")], [])

    async def adapter() -> Sample:
        return await _through(lambda: model.stream(request))

    async def loop() -> Sample:
        agent.reset()
        return await _through(lambda: agent.stream("go"))

    return {"tether model": adapter, "tether agent": loop}


def openai_rows(url: str, chunks: int) -> dict[str, Run]:
    client = openai.AsyncOpenAI(api_key="bench", base_url=url + "/v1", max_retries=0)

    async def raw() -> Sample:
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

    model = OpenAIModel(str(chunks), api_key="bench", base_url=url + "/v1")
    return {"raw SDK": raw, **_tether_rows(model)}


def gemini_rows(url: str, chunks: int) -> dict[str, Run]:
    from google import genai

    client = genai.Client(api_key="bench", http_options=genai.types.HttpOptions(base_url=url))

    async def raw() -> Sample:
        start = time.perf_counter()
        first = 0.0
        count = 0
        stream = await client.aio.models.generate_content_stream(model=str(chunks), contents="go")
        async for chunk in stream:
            if chunk.text:
                count += 1
                if not first:
                    first = time.perf_counter()
        return first - start, time.perf_counter() - start, count

    model = GeminiModel(str(chunks), api_key="bench", base_url=url)
    return {"raw SDK": raw, **_tether_rows(model)}


def responses_rows(url: str, chunks: int) -> dict[str, Run]:
    client = openai.AsyncOpenAI(api_key="bench", base_url=url + "/v1", max_retries=0)

    async def raw() -> Sample:
        start = time.perf_counter()
        first = 0.0
        count = 0
        stream = await client.responses.create(
            model=str(chunks), input="go", store=False, stream=True
        )
        async for event in stream:
            if event.type == "response.output_text.delta" and event.delta:
                count += 1
                if not first:
                    first = time.perf_counter()
        return first - start, time.perf_counter() - start, count

    model = OpenAIResponsesModel(str(chunks), api_key="bench", base_url=url + "/v1")
    return {"raw SDK": raw, **_tether_rows(model)}


ROWS = {"openai": openai_rows, "gemini": gemini_rows, "responses": responses_rows}


async def measure(
    url: str, chunks: int, runs: int, providers: list[str]
) -> dict[tuple[str, str], list[tuple[float, float, float]]]:
    rows = {
        (provider, name): run
        for provider in providers
        for name, run in ROWS[provider](url, chunks).items()
    }
    for run in rows.values():  # warm-up: connections, imports, caches
        for _ in range(3):
            await run()
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {key: [] for key in rows}
    for _ in range(runs):
        for key, run in rows.items():
            gc.collect()  # each sample starts clean: no row pays for the previous one's garbage
            cpu = time.process_time()
            first, total, count = await run()
            cpu = time.process_time() - cpu
            assert count == chunks, f"{key} saw {count} text events, expected {chunks}"
            results[key].append((first, total, cpu))
    return results


def _providers(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = sorted(set(names) - set(PROVIDERS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(PROVIDERS)}; got {value!r}")
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument(
        "--providers",
        type=_providers,
        default=list(PROVIDERS),
        help=f"comma-separated, of {','.join(PROVIDERS)} (default: all)",
    )
    args = parser.parse_args()
    proc, url = start_server()
    try:
        results = asyncio.run(measure(url, args.chunks, args.runs, args.providers))
    finally:
        proc.terminate()
        proc.wait()
    print(f"{args.chunks} chunks, {args.runs} alternating runs, p50 values")
    print(
        f"{'provider':<10} {'row':<14} {'first text ms':>14} {'added ms':>9} "
        f"{'total ms':>9} {'throughput':>11} {'cpu ms':>7} {'cpu share':>10}"
    )
    for provider in args.providers:
        raw = results[(provider, "raw SDK")]
        raw_first = statistics.median(s[0] for s in raw)
        raw_total = statistics.median(s[1] for s in raw)
        raw_cpu = statistics.median(s[2] for s in raw)
        for (where, name), samples in results.items():
            if where != provider:
                continue
            first = statistics.median(s[0] for s in samples)
            total = statistics.median(s[1] for s in samples)
            cpu = statistics.median(s[2] for s in samples)
            print(
                f"{provider:<10} {name:<14} {first * 1e3:>14.3f} "
                f"{(first - raw_first) * 1e3:>9.3f} {total * 1e3:>9.2f} {raw_total / total:>10.1%} "
                f"{cpu * 1e3:>7.1f} {raw_cpu / cpu:>9.1%}"
            )


if __name__ == "__main__":
    main()
