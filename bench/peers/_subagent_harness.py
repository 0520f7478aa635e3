"""Harness of the sub-agent benchmark runners (stdlib only: peers' venvs lack tether).

It takes the prompt, answer, tool arguments, ``Subject`` and ``Counters`` of the
overhead harness (_harness.py, beside it); the report fields it leaves unset
(``Subject.report``, the hook counters) are not used here.

Two workloads, chosen by ``--variant``:

- ``plain``: PROMPT -> model calls tool ``add(a=1, b=2)`` -> model answers ANSWER
  (2 model calls, 1 ``add``).
- ``delegate``: PROMPT -> parent model calls tool ``helper(<task>)``, an agent
  used as a tool -> the child's model calls ``add(a=1, b=2)`` -> the child answers
  CHILD_ANSWER -> the parent answers ANSWER (4 model calls, 1 ``add``).

Timed unit: ``reset()`` (fresh parent conversation) + ``await invoke()``, with
``perf_counter_ns``; warm-ups are checked (final text and counters), timed runs are
checked in bulk. One JSON line on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _harness import ANSWER, PROMPT, TOOL_ARGS, Counters, Subject, _check

__all__ = ["ANSWER", "CHILD_ANSWER", "COUNTS", "PROMPT", "TASK", "TOOL_ARGS", "Subject", "main"]

TASK = "Add 1 and 2."
CHILD_ANSWER = "3"
PER_INVOCATION = {"plain": (2, 1), "delegate": (4, 1)}
"""Per invocation of a variant: (model calls, ``add`` calls)."""

COUNTS = Counters()
"""The sub-agent runners' own counters (only model_calls and tool_calls are bumped)."""


def _counts(before: tuple[int, int], n: int, variant: str, where: str) -> None:
    model, tools = PER_INVOCATION[variant]
    got = (COUNTS.model_calls - before[0], COUNTS.tool_calls - before[1])
    _check(got == (model * n, tools * n), f"{where}: (model calls, add calls) {got}")


async def _run(subject: Subject, variant: str, n: int, warmup: int, repeats: int) -> list[Any]:
    runs = []
    for _ in range(repeats):
        for _ in range(warmup):
            before = (COUNTS.model_calls, COUNTS.tool_calls)
            subject.reset()
            text = subject.text_of(await subject.invoke())
            _check(text == ANSWER, f"final text {text!r} != {ANSWER!r}")
            _counts(before, 1, variant, "warm-up")
        gc.collect()
        samples = [0] * n
        before = (COUNTS.model_calls, COUNTS.tool_calls)
        clock = time.perf_counter_ns
        for i in range(n):
            t0 = clock()
            subject.reset()
            await subject.invoke()
            samples[i] = clock() - t0
        _counts(before, n, variant, f"{n} timed invocations")
        samples.sort()
        runs.append(
            {
                "median_us": statistics.median(samples) / 1000,
                "p99_us": samples[max(0, -(-99 * n // 100) - 1)] / 1000,
            }
        )
    return runs


def main(build: Callable[[str], Awaitable[Subject]], argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Run one framework's sub-agent workload.")
    p.add_argument("--variant", choices=("plain", "delegate"), default="delegate")
    p.add_argument("--invocations", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)

    async def go() -> dict[str, Any]:
        subject = await build(args.variant)
        runs = await _run(subject, args.variant, args.invocations, args.warmup, args.repeats)
        return {
            "name": subject.name,
            "version": subject.version,
            "setup": subject.setup,
            "invocations": args.invocations,
            "repeats": runs,
        }

    out = asyncio.run(go())
    out["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    out["variant"] = args.variant
    sys.stdout.write(json.dumps(out) + "\n")
