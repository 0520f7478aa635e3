"""Timing shared by the Temporal benchmark's runners (stdlib only: the peer's venv has no
tether). The timed unit is one workflow invocation, start to result, through a Client
to a Worker in the same process, on the dev server at ``--address``; beside its wall time,
the process's CPU time per invocation (client, worker and framework; not the server's)."""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

PROMPT = "What is 1 + 2?"
ANSWER = "The answer is 3."
TOOL_ARGS = {"a": 1, "b": 2}

Invoke = Callable[[int], Awaitable[str]]
"""``invoke(i)``: run invocation ``i`` (a fresh workflow id) and return its final text."""


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--address", required=True)
    p.add_argument("--invocations", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--variant", default="")
    return p.parse_args()


async def measure(invoke: Invoke, invocations: int, warmup: int) -> dict[str, Any]:
    """Warm up, then time ``invocations`` sequential runs; each must answer ANSWER."""
    for i in range(warmup):
        await _checked(invoke, i)
    times_ms = []
    cpu_start = time.process_time_ns()
    for i in range(warmup, warmup + invocations):
        start = time.perf_counter_ns()
        await _checked(invoke, i)
        times_ms.append((time.perf_counter_ns() - start) / 1e6)
    cpu_ms = (time.process_time_ns() - cpu_start) / 1e6 / invocations
    times_ms.sort()
    return {
        "invocations": invocations,
        "warmup": warmup,
        "median_ms": statistics.median(times_ms),
        "mean_ms": statistics.fmean(times_ms),
        "p90_ms": times_ms[min(len(times_ms) - 1, int(len(times_ms) * 0.9))],
        "min_ms": times_ms[0],
        "max_ms": times_ms[-1],
        "cpu_ms": cpu_ms,
        "python": platform.python_version(),
    }


async def _checked(invoke: Invoke, i: int) -> None:
    text = await invoke(i)
    if text != ANSWER:
        raise SystemExit(f"invocation {i} answered {text!r}, not {ANSWER!r}")


async def history_counts(client: Any, workflow_id: str) -> dict[str, int]:
    """What one invocation's history holds: activities by type, local activities (their
    markers) and workflow tasks."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    counts: dict[str, int] = {}
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            counts[f"activity {name}"] = counts.get(f"activity {name}", 0) + 1
        elif event.HasField("marker_recorded_event_attributes"):
            counts["local activities"] = counts.get("local activities", 0) + 1
        elif event.HasField("workflow_task_completed_event_attributes"):
            counts["workflow tasks"] = counts.get("workflow tasks", 0) + 1
    counts["events"] = len(history.events)
    return counts


def emit(result: dict[str, Any]) -> None:
    print(json.dumps(result), flush=True)


def run(main: Callable[[argparse.Namespace], Awaitable[dict[str, Any]]]) -> None:
    emit(asyncio.run(main(arguments())))
    sys.exit(0)
