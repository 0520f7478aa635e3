"""Workflows side by side: the same 5-node graph of scripted agents in tether, LangGraph
and Strands ``Graph``, in memory and with SQLite checkpointing.

Usage: `.venv/bin/python bench/workflows.py [--quick] [--only tether,langgraph,strands]
[--invocations 200 --warmup 20] [--json PATH]`. `--quick`: 30 invocations after 5
warm-ups. The graph (bench/peers/_workflow_harness.py): plan -> (a, b at once) -> join
(waits for both) -> final, each node one instant scripted model call. Reported per row:
the median time per node, and with SQLite the bytes stored per superstep (tether: the
journal entries of the workflow's session and its five node sessions; LangGraph: its
checkpoints, metadata and writes). Differences to keep in mind: a tether node is a whole
agent run in its own durable child session under the workflow's policy; a LangGraph node
here is a function calling a fake chat model; Strands' Graph has no checkpointer, so it
has a memory row only. Peers run in their own pinned venvs under bench/.venvs (created
on first use).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from _runs import LANGGRAPH, STRANDS, Row, ensure_venv, log, run

ROWS = (
    Row("tether:memory", "tether", "tether", "tether_workflows.py", "", None, "memory"),
    Row("tether:sqlite", "tether", "tether", "tether_workflows.py", "", None, "sqlite"),
    Row(
        "langgraph:memory",
        "LangGraph",
        "langgraph",
        "langgraph_workflows.py",
        "",
        LANGGRAPH,
        "memory",
    ),
    Row(
        "langgraph:sqlite",
        "LangGraph",
        "langgraph",
        "langgraph_workflows.py",
        "",
        LANGGRAPH,
        "sqlite",
    ),
    Row(
        "strands:memory", "Strands Graph", "strands", "strands_workflows.py", "", STRANDS, "memory"
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--invocations", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--json", default="")
    ns = parser.parse_args()
    if ns.quick:
        ns.invocations, ns.warmup = 30, 5
    groups = {g.strip() for g in ns.only.split(",") if g.strip()}
    rows = [r for r in ROWS if not groups or r.group in groups]
    for venv in dict.fromkeys(r.venv for r in rows if r.venv):
        ensure_venv(venv)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            flags = ["--invocations", str(ns.invocations), "--warmup", str(ns.warmup)]
            flags += ["--mode", row.variant]
            if row.variant == "sqlite":
                flags += ["--db", str(Path(tmp) / f"{row.key.replace(':', '-')}.db")]
            log(f"running {row.key} ...")
            results[row.key] = run(
                Row(row.key, row.label, row.group, row.runner, "", row.venv), flags
            )
    report(results)
    if ns.json:
        Path(ns.json).write_text(json.dumps(results, indent=2))


def report(results: dict[str, dict[str, Any]]) -> None:
    print(f"\n{'row':<18} {'version':<26} {'us/node':>10} {'bytes/step':>11}")
    for key, out in results.items():
        if "error" in out:
            print(f"{key:<18} error: {out['error']}")
            continue
        size = out.get("bytes_per_step")
        print(
            f"{key:<18} {out['version']:<26} {out['us_per_node']:>10.1f} "
            f"{'' if size is None else f'{size:.0f}':>11}"
        )
    for mode in ("memory", "sqlite"):
        mine = results.get(f"tether:{mode}", {})
        for peer in ("langgraph", "strands"):
            theirs = results.get(f"{peer}:{mode}", {})
            if "us_per_node" in mine and "us_per_node" in theirs:
                ratio = mine["us_per_node"] / theirs["us_per_node"]
                print(f"tether / {peer} ({mode}): {ratio:.2f}x the time per node")
            if "bytes_per_step" in mine and "bytes_per_step" in theirs:
                ratio = mine["bytes_per_step"] / theirs["bytes_per_step"]
                print(f"tether / {peer} ({mode}): {ratio:.2f}x the bytes per step")


if __name__ == "__main__":
    sys.exit(main())
