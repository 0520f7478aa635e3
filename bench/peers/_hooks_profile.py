"""Drive one hooks row N times for a profiler (stdlib only, like _harness).

Usage: `python bench/peers/_hooks_profile.py tether|maf|sdk N [--history H] [--cprofile]`
(tether on the project's .venv python, maf on bench/.venvs/maf/bin/python).

Runs the same workload as the `hooks` rows of bench/overhead.py (after `--warmup`
untimed invocations, 20 by default) N times, with no timing of its own, so that an outside profiler sees
only invocations. A noise-free per-invocation cost on a loaded machine is the
difference of two callgrind runs divided by the difference in N:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python ... tether 50
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python ... tether 250

(Collected "Ir" lines; (Ir_250 - Ir_50) / 200 instructions per invocation.)
`--history H` first gives the conversation H messages of history and keeps it
(the history grows by 4 messages per invocation, as in bench/scaling.py); the
history shape is bench/scaling.py's. `--cprofile` prints the top of a cProfile
of the N invocations instead, `--time` their median wall time.

`sdk` (tether's python) is the SDK's floor under tether's row: the ten contexts
one tether invocation emits (captured once from a real run, history included)
are rebuilt with the SDK's own `AgentContextBuilder` and emitted on a bare
`InterceptionEmitter` (same interceptor, enforce, jcs-sha256, 5 s timeout, no
sink, one session per invocation), with nothing of tether in between. Tether's
own share of the row is the row minus this floor. `sdk-ctx` is the same with the
contexts in tether's `Context` (its deep copy); `sdk-onepass` the same again on
bench/peers/_hooks_upstream.py's prototype of the proposed SDK change.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import time
from typing import Any


async def _subject(framework: str, history: int) -> tuple[Any, Any]:
    """(invoke, reset) for the row; with ``history``, reset restores the same n messages."""
    if framework in ("sdk", "sdk-ctx", "sdk-onepass"):
        return await _sdk_floor(history, framework != "sdk", framework == "sdk-onepass")
    if history:
        if framework == "maf":
            from maf_hooks_scaling import seeded as maf_seeded

            return maf_seeded(history)
        from tether_hooks_scaling import seeded

        return seeded(history, hooks=framework == "tether")
    if framework == "plain":  # tether's plain row (three no-op hooks), for reference
        from tether_overhead import build
    elif framework == "tether":
        from tether_hooks_overhead import build
    else:
        from maf_hooks_overhead import build
    subject = await build("")
    return subject.invoke, subject.reset


_FIELDS = {
    "agent_startup": lambda c: {"tools_registered": c["agent_init"]["tools_registered"]},
    "input": lambda c: dict(c["input"]),
    "pre_model_call": lambda c: {"model_id": c["model"]["id"], "messages": c["messages"]},
    "post_model_call": lambda c: {
        "model_id": c["model"]["id"],
        "content": c["response"]["content"],
        "tool_calls": c["response"]["tool_calls"],
        "finish_reason": c["response"]["finish_reason"],
    },
    "pre_tool_call": lambda c: {
        "call_id": c["tool_call"]["id"],
        "name": c["tool_call"]["name"],
        "args": c["tool_call"]["args"],
    },
    "post_tool_call": lambda c: {
        "call_id": c["tool_call"]["id"],
        "name": c["tool_call"]["name"],
        "args": c["tool_call"]["args"],
        "value": c["tool_result"]["value"],
        "is_error": c["tool_result"]["is_error"],
    },
    "output": lambda c: dict(c["output"]),
    "agent_shutdown": lambda c: dict(c["summary"]),
}


async def _sdk_floor(history: int, host_copy: bool, one_pass: bool = False) -> tuple[Any, Any]:
    """(invoke, reset) that emit one tether invocation's contexts on the bare SDK
    (``host_copy``: wrapped in tether's ``Context``, whose deep copy the SDK then uses;
    ``one_pass``: on bench/peers/_hooks_upstream.py's prototype of the proposed SDK change,
    checked first to give the stock emitter's records)."""
    from _hooks_interceptor import CountingAllowAll
    from agent_hooks import AgentContextBuilder, InterceptionEmitter

    captured: list[dict[str, Any]] = []

    class Recording(CountingAllowAll):
        def intercept(self, context: dict[str, Any]) -> dict[str, str]:
            captured.append(context)
            return super().intercept(context)

    from tether import Agent

    if history:
        from tether_hooks_scaling import FlatModel, add
        from tether_hooks_scaling import history as turns

        agent = Agent(model=FlatModel(), tools=[add], agent_hooks=[Recording()])
        agent.messages = turns(history)
    else:
        from tether_overhead import add, script

        from tether.models import ScriptedModel

        agent = Agent(model=ScriptedModel(script), tools=[add], agent_hooks=[Recording()])
    await agent.invoke_async("What is 1 + 2?")
    plan = [(c["interception_point"], _FIELDS[c["interception_point"]](c)) for c in captured]
    from tether.control.agent_hooks.interceptors import Context

    wrap = Context if host_copy else dict
    kind = InterceptionEmitter
    if one_pass:
        from _hooks_upstream import OnePassEmitter, check

        probe = AgentContextBuilder(agent_id="tether", framework="tether", session_id="check")
        await check([getattr(probe, p)(**f) for p, f in plan], CountingAllowAll())
        kind = OnePassEmitter
    emitter = kind(timeout=5.0, identity_provider="jcs-sha256")
    emitter.register(CountingAllowAll(), name="allow-all")
    session = [0]

    async def invoke() -> None:
        session[0] += 1
        builder = AgentContextBuilder(
            agent_id="tether", framework="tether", session_id=f"floor.{session[0]}"
        )
        for point, fields in plan:
            await emitter.emit_unchecked(wrap(getattr(builder, point)(**fields)))
        emitter.take_records()

    return invoke, lambda: None


async def _run(
    framework: str, n: int, history: int, profile: bool, warmup: int, timed: bool
) -> None:
    invoke, reset = await _subject(framework, history)
    for _ in range(warmup):
        reset()
        await invoke()
    if timed:  # median wall time per invocation (reset + invoke), in microseconds
        samples = []
        for _ in range(n):
            began = time.perf_counter_ns()
            reset()
            await invoke()
            samples.append(time.perf_counter_ns() - began)
        print(f"{framework} median_us={statistics.median(samples) / 1000:.1f}")
        return
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    for _ in range(n):
        reset()
        await invoke()
    if profiler is not None:
        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("framework", choices=("tether", "maf", "sdk", "sdk-ctx", "sdk-onepass", "plain"))
    p.add_argument("n", type=int)
    p.add_argument("--history", type=int, default=0)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--cprofile", action="store_true")
    p.add_argument("--time", action="store_true", help="print the median wall time instead")
    args = p.parse_args()
    asyncio.run(_run(args.framework, args.n, args.history, args.cprofile, args.warmup, args.time))


if __name__ == "__main__":
    main()
