"""Per-invocation overhead of tether and its peers, side by side in one run.

Usage: `make bench`, or `.venv/bin/python bench/overhead.py [--invocations 500
--warmup 50 --repeats 3] [--only tether,bare] [--memory] [--json PATH] [--check]`.

What one invocation is, identical in every row: a prompt, 2 model calls and
1 tool call. The model is an instant in-process fake (no I/O, no sleep): the
first call returns a tool call `add(a=1, b=2)`, the second (seeing the tool
result) returns the text "The answer is 3.". The tool is
`async def add(a: int, b: int) -> int` everywhere, plus a second tether row
with a plain `def add`, which tether runs in a thread pool. Three no-op
callbacks are registered with each framework's own mechanism: before each
model call (fires twice), before and after the tool call. The fake model, the
tool and each callback only increment an int counter, which the runner checks
(2 model calls, 1 tool call, 2+1+1 callback firings per invocation, and the
final text on every warm-up invocation).

What is timed: per invocation, `perf_counter_ns` around "start a fresh
conversation on the ONE reused agent (the framework's cheapest way) + await
its async entry point". Each row runs in its own process, one asyncio event
loop (stdlib loop), repeats x (warm-up, not timed; then timed invocations),
with gc.collect() before each timed block and gc left on. Reported: the median
over repeats of each repeat's median and nearest-rank p99, in microseconds;
ratios use medians. All rows run on the same CPython as this script; peers run
with their own venv's python (bench/.venvs/<name>, created with this
interpreter and pinned: strands-agents==1.62.0, agent-framework-core==1.23.0;
their dependencies are whatever pip resolves). Rows run one after another.

The rows (full setup in each runner's docstring, bench/peers/*_overhead.py):
- bare asyncio: a minimal typed loop (dataclasses, dict hook registry).
- tether: Agent + ScriptedModel, agent.hooks.add x3, agent.reset(),
  `await agent.invoke_async(...)`.
- Strands: Agent(callback_handler=None) (the default handler prints to
  stdout), a `strands.models.Model` subclass yielding stream events (Strands
  only streams), agent.add_hook x3, `agent.messages = []`,
  `await agent.invoke_async(...)`.
- MAF: Agent over a BaseChatClient subclass with the layers MAF's shipped
  clients have (function invocation, chat middleware, telemetry), non-streaming
  `await agent.run(...)`; callbacks are middleware (MAF has no hook events): one
  ChatMiddleware and one FunctionMiddleware (before + after), class-based, which
  is MAF's cheaper form. A MAF run without a session is stateless, so "fresh
  conversation" costs it nothing, whereas tether and Strands keep and reset
  history; the extra row "MAF (session per run)" passes a new session each run.
- tether + AGENT-HOOKS / MAF + AGENT-HOOKS (group `hooks`): the same workload
  with one allow-all AGENT-HOOKS-0.1 interceptor (bench/peers/_hooks_interceptor.py,
  it also counts the three callback points) instead of the hooks/middleware:
  `Agent(interceptors=[...])` vs MAF's `create_agent_hooks_middleware([...])`,
  both over agent-hooks-sdk 0.1.0b3 with jcs-sha256 identities and one
  AGENT-HOOKS session per run. Target: tether <= 0.5x MAF.
- OpenTelemetry (group `otel`): every traced row uses the one SDK setup of
  bench/peers/_otel_setup.py: a TracerProvider whose spans go to one in-memory exporter
  that counts and drops them (SimpleSpanProcessor for `sdk-noop`, BatchSpanProcessor for
  `sdk-batch`), plus a MeterProvider with an in-memory reader. tether
  (bench/peers/tether_otel_overhead.py) runs with tracing off (the OTel API loaded, no
  provider: tether registers nothing) and traced through `tether.observe.instrument`;
  Strands and MAF (strands_/maf_otel_overhead.py) are traced through the global
  providers set before their agent is built, which is how both turn tracing on. Each
  traced row must export spans (the runner checks and reports spans per invocation).
  Printed after the table: tether over each peer with tracing on, and each framework's
  traced/untraced ratio (needs the `tether`/`strands`/`maf` rows in the same run).
- Both peers keep their default instrumentation (OTel API, no tracer provider
  configured, so non-recording spans). The fakes skip provider-side work (MAF's
  `_validate_options`, Strands' usage metadata event).

`--memory`: per row, 10,000 invocations on one agent (fresh conversation each),
growth per invocation = (value at 10,000 - value at 1,000) / 9,000 after
gc.collect(): the Python heap from tracemalloc's current traced size, and RSS
from a second run without tracemalloc (its bookkeeping would inflate RSS).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import _report
from _runs import Row, ensure_venv, log, run, select, write_json


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--invocations", type=int, default=500, help="timed invocations per repeat")
    p.add_argument("--warmup", type=int, default=50, help="untimed, checked warm-ups per repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", help="comma-separated rows or groups: bare,tether,strands,maf,...")
    p.add_argument("--memory", action="store_true", help="run the memory-growth check instead")
    p.add_argument("--total", type=int, default=10_000, help="memory: invocations per row")
    p.add_argument("--mark", type=int, default=1_000, help="memory: first measuring point")
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    return p.parse_args(argv)


def _prepare(rows: list[Row]) -> None:
    for venv in dict.fromkeys(r.venv for r in rows if r.venv):
        ensure_venv(venv)


def _timing(rows: list[Row], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    flags = ["--invocations", str(args.invocations), "--warmup", str(args.warmup)]
    flags += ["--repeats", str(args.repeats)]
    results = {}
    for row in rows:
        log(f"timing {row.label} ...")
        results[row.key] = run(row, ["--mode", "timing", *flags])
    meta = f"{args.invocations} invocations after {args.warmup} warm-ups, x{args.repeats}"
    return results, _report.timing(rows, results, meta)


def _memory(rows: list[Row], args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    flags = ["--mode", "memory", "--total", str(args.total), "--mark", str(args.mark)]
    results = {}
    for row in rows:
        log(f"memory {row.label} ...")
        results[row.key] = {"heap": run(row, [*flags, "--trace"]), "rss": run(row, flags)}
    meta = f"{args.total:,} invocations, growth from {args.mark:,} to {args.total:,}"
    return results, _report.memory(rows, results, meta)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    rows = select(args.only)
    _prepare(rows)
    results, report = (_memory if args.memory else _timing)(rows, args)
    if args.json:
        name = "memory" if args.memory else "overhead"
        write_json(args.json, name, args, {"results": results, **report}, machine=True)
        log(f"wrote {args.json}")
    failed = [k for k, v in results.items() if _failed(v)]
    missed = [k for k, v in report["targets"].items() if not v["ok"]]
    if failed:
        log(f"runners failed: {', '.join(failed)}")
    return 1 if failed or (args.check and missed) else 0


def _failed(result: dict[str, Any]) -> bool:
    parts = result.values() if "heap" in result else [result]
    return any(isinstance(p, dict) and "error" in p for p in parts)


if __name__ == "__main__":
    sys.exit(main())
