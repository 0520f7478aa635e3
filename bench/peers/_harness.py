"""Timing and memory harness shared by the overhead runners (stdlib only).

A runner builds ONE agent inside the event loop and hands the harness a
`Subject`; the harness drives it and prints ONE JSON line on stdout. The
runners import this file by path (it sits beside them, and Python puts a
script's folder first on sys.path), so it must import nothing but the stdlib:
the peers' venvs have neither tether nor the other peers.

Timed unit, per invocation: `subject.reset()` (fresh conversation) followed by
`await subject.invoke()`, read with `time.perf_counter_ns` around both.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

PROMPT = "What is 1 + 2?"
ANSWER = "The answer is 3."
TOOL_ARGS = {"a": 1, "b": 2}


@dataclass
class Counters:
    """How often each part of the workload ran; the hooks and fakes bump these."""

    model_calls: int = 0
    tool_calls: int = 0
    before_model: int = 0
    before_tool: int = 0
    after_tool: int = 0

    def copy(self) -> Counters:
        return Counters(**asdict(self))

    def minus(self, other: Counters) -> Counters:
        mine, theirs = asdict(self), asdict(other)
        return Counters(**{k: mine[k] - theirs[k] for k in mine})


COUNTS = Counters()
"""The one set of counters a runner's fake model, tool and hooks increment."""

PER_INVOCATION = Counters(model_calls=2, tool_calls=1, before_model=2, before_tool=1, after_tool=1)


def expected(n: int) -> Counters:
    """Counter deltas that `n` correct invocations produce."""
    per = asdict(PER_INVOCATION)
    return Counters(**{k: v * n for k, v in per.items()})


@dataclass
class Subject:
    """One framework's agent, ready to be driven by the harness."""

    name: str
    version: str
    invoke: Callable[[], Awaitable[Any]]
    """Runs one invocation of PROMPT on the reused agent; returns its result."""
    reset: Callable[[], None]
    """Starts a fresh conversation on the same agent (cheapest supported way)."""
    text_of: Callable[[Any], str]
    """Final answer text of a result (checked on warm-up invocations only)."""
    setup: str = ""
    """One line on how this subject is set up (classes used), for the report."""
    report: Callable[[int], dict[str, Any]] | None = None
    """Traced rows: given the number of invocations run, what the tracing exported
    (`spans_per_invocation` must be > 0: tracing really was on); merged into the output."""


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SystemExit(f"workload check failed: {message}")


def _check_counts(before: Counters, n: int, where: str) -> None:
    got, want = COUNTS.minus(before), expected(n)
    _check(got == want, f"{where}: counters {asdict(got)} != {asdict(want)}")


async def _warm_up(subject: Subject, n: int) -> None:
    """Invocations that are not timed; each one is checked in full."""
    for _ in range(n):
        before = COUNTS.copy()
        subject.reset()
        text = subject.text_of(await subject.invoke())
        _check(text == ANSWER, f"final text {text!r} != {ANSWER!r}")
        _check_counts(before, 1, "warm-up invocation")


async def _timed(subject: Subject, n: int) -> list[int]:
    """Per-invocation wall times in ns (reset + invoke), counters checked in bulk."""
    invoke, reset, clock = subject.invoke, subject.reset, time.perf_counter_ns
    samples = [0] * n
    before = COUNTS.copy()
    for i in range(n):
        t0 = clock()
        reset()
        await invoke()
        samples[i] = clock() - t0
    _check_counts(before, n, f"{n} timed invocations")
    return samples


def _p99(sorted_ns: list[int]) -> int:
    """Nearest-rank 99th percentile."""
    return sorted_ns[max(0, math.ceil(0.99 * len(sorted_ns)) - 1)]


async def run_timing(
    subject: Subject, invocations: int, warmup: int, repeats: int
) -> dict[str, Any]:
    """`repeats` x (`warmup` checked warm-ups, then `invocations` timed ones)."""
    runs: list[dict[str, float]] = []
    for _ in range(repeats):
        await _warm_up(subject, warmup)
        gc.collect()
        samples = sorted(await _timed(subject, invocations))
        runs.append(
            {
                "median_us": statistics.median(samples) / 1000,
                "p99_us": _p99(samples) / 1000,
                "mean_us": statistics.fmean(samples) / 1000,
                "min_us": samples[0] / 1000,
            }
        )
    return {"invocations": invocations, "warmup": warmup, "repeats": runs}


def _rss_bytes() -> int:
    """Current resident set size (Linux /proc), else peak RSS from getrusage."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def run_memory(subject: Subject, total: int, mark: int, trace: bool) -> dict[str, Any]:
    """Growth per invocation between invocation `mark` and `total`, after gc.

    With `trace`, Python heap via tracemalloc (current traced size); without,
    RSS only (tracemalloc's own bookkeeping would inflate RSS).
    """
    if not 1 < mark < total:
        raise SystemExit(f"memory: need 1 < mark ({mark}) < total ({total})")
    await _warm_up(subject, 1)
    if trace:
        tracemalloc.start()
    points: dict[int, dict[str, int]] = {}
    before = COUNTS.copy()
    for i in range(2, total + 1):
        subject.reset()
        await subject.invoke()
        if i in (mark, total):
            gc.collect()
            point = {"rss": _rss_bytes()}
            if trace:
                point["traced"] = tracemalloc.get_traced_memory()[0]
            points[i] = point
    if trace:
        tracemalloc.stop()
    _check_counts(before, total - 1, f"{total - 1} memory-run invocations")
    span = total - mark
    key = "traced" if trace else "rss"
    growth = (points[total][key] - points[mark][key]) / span
    return {"total": total, "mark": mark, "metric": key, "points": points, "bytes_per_inv": growth}


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run one framework's overhead workload.")
    p.add_argument("--mode", choices=("timing", "memory"), default="timing")
    p.add_argument("--variant", default="", help="runner-specific variant (e.g. sync)")
    p.add_argument("--invocations", type=int, default=500)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--total", type=int, default=10_000, help="memory: invocations in all")
    p.add_argument("--mark", type=int, default=1_000, help="memory: first measuring point")
    p.add_argument("--trace", action="store_true", help="memory: use tracemalloc (else RSS)")
    return p.parse_args(argv)


def main(build: Callable[[str], Awaitable[Subject]], argv: list[str] | None = None) -> None:
    """Entry point of a runner: build the subject, measure, print one JSON line."""
    args = _parse(argv)

    async def _run() -> dict[str, Any]:
        subject = await build(args.variant)
        if args.mode == "timing":
            data = await run_timing(subject, args.invocations, args.warmup, args.repeats)
            ran = args.repeats * (args.invocations + args.warmup)
        else:
            data = await run_memory(subject, args.total, args.mark, args.trace)
            ran = args.total
        if subject.report is not None:
            data["tracing"] = subject.report(ran)
            spans = data["tracing"].get("spans_per_invocation", 0)
            _check(spans > 0, f"tracing is on but {spans} spans were exported per invocation")
        return {"name": subject.name, "version": subject.version, "setup": subject.setup, **data}

    out = asyncio.run(_run())
    out["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    out["mode"], out["variant"] = args.mode, args.variant
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
