"""Overhead of one delegation (parent -> child agent -> tool -> back), side by side.

Usage: `.venv/bin/python bench/subagents.py [--quick] [--only tether,strands,openai-agents]
[--invocations 300 --warmup 30 --repeats 3] [--json PATH]`. `--quick`: 50 invocations
after 5 warm-ups, one repeat (well under a minute once the peers' venvs exist).

Each framework runs two workloads in its own process (bench/peers/*_subagents.py,
harness bench/peers/_subagent_harness.py): `plain`, a prompt -> tool `add` -> answer
(2 model calls), and `delegate`, a prompt -> an agent used as a tool -> its `add` ->
its answer -> the parent's answer (4 model calls). Models are instant in-process
fakes; no store, no hooks, tracing off. Reported per framework: the medians, the
cost of the delegation (delegate - plain) and delegate / plain; then tether's
delegate median against each peer's (ratio < 1: tether is faster). Peers run in
their own pinned venvs under bench/.venvs (created on first use).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

from _runs import Row, Venv, ensure_venv, log, run, write_json

STRANDS = Venv("strands", ("strands-agents==1.62.0",))
OPENAI_AGENTS = Venv("openai-agents", ("openai-agents==0.24.0",))
FRAMEWORKS = {
    "tether": ("tether", "tether_subagents.py", None),
    "strands": ("Strands", "strands_subagents.py", STRANDS),
    "openai-agents": ("OpenAI Agents SDK", "openai_agents_subagents.py", OPENAI_AGENTS),
}


def _rows(only: str | None) -> list[Row]:
    names = [n.strip() for n in (only or ",".join(FRAMEWORKS)).split(",") if n.strip()]
    unknown = [n for n in names if n not in FRAMEWORKS]
    if unknown:
        raise SystemExit(f"--only: unknown {unknown}; known: {sorted(FRAMEWORKS)}")
    rows = []
    for name in names:
        label, runner, venv = FRAMEWORKS[name]
        for variant in ("plain", "delegate"):
            rows.append(Row(f"{name}:{variant}", label, name, runner, "", venv, variant))
    return rows


def _median(result: dict[str, Any]) -> float:
    return statistics.median(r["median_us"] for r in result["repeats"])


def report(rows: list[Row], results: dict[str, dict[str, Any]], meta: str) -> dict[str, Any]:
    """Print the table and ratios; return them for JSON."""
    print(f"\nSub-agent delegation overhead ({meta})\n")
    print(
        f"{'framework':<20} {'plain us':>10} {'delegate us':>12} {'delegation us':>14} {'ratio':>7}"
    )
    summary: dict[str, Any] = {}
    for group in dict.fromkeys(r.group for r in rows):
        plain, delegate = results.get(f"{group}:plain", {}), results.get(f"{group}:delegate", {})
        label = FRAMEWORKS[group][0]
        if "error" in plain or "error" in delegate or not plain or not delegate:
            why = plain.get("error") or delegate.get("error") or "not run"
            print(f"{label:<20} not run: {why}")
            continue
        p, d = _median(plain), _median(delegate)
        summary[group] = {"plain_us": p, "delegate_us": d, "delegation_us": d - p, "ratio": d / p}
        print(f"{label:<20} {p:>10.1f} {d:>12.1f} {d - p:>14.1f} {d / p:>7.2f}")
    mine = summary.get("tether")
    if mine:
        ratios = {}
        for group, theirs in summary.items():
            if group != "tether":
                ratio = ratios[f"tether/{group}"] = mine["delegate_us"] / theirs["delegate_us"]
                print(f"tether delegate / {FRAMEWORKS[group][0]} delegate: {ratio:.2f}")
        summary.update(ratios)
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--quick", action="store_true", help="50 invocations, 5 warm-ups, 1 repeat")
    p.add_argument("--invocations", type=int, default=300)
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", help="comma-separated: tether,strands,openai-agents")
    p.add_argument("--json", type=Path, metavar="PATH")
    args = p.parse_args(argv)
    if args.quick:
        args.invocations, args.warmup, args.repeats = 50, 5, 1
    rows = _rows(args.only)
    for venv in dict.fromkeys(r.venv for r in rows if r.venv):
        ensure_venv(venv)
    flags = ["--invocations", str(args.invocations), "--warmup", str(args.warmup)]
    flags += ["--repeats", str(args.repeats)]
    results = {}
    for row in rows:
        log(f"timing {row.key} ...")
        results[row.key] = run(row, flags)
    meta = f"{args.invocations} invocations after {args.warmup} warm-ups, x{args.repeats}"
    summary = report(rows, results, meta)
    if args.json:
        write_json(args.json, "subagents", args, {"results": results, "summary": summary})
    return 1 if any("error" in v for v in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
