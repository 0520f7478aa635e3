"""Durability cost of tether next to LangGraph + langgraph-checkpoint-sqlite, in one run.

Usage: `.venv/bin/python bench/durability.py [--steps 500 --history 50 --trials 25
--grow-steps 100] [--dir DIR] [--json PATH] [--check]`.

Both sides use a file SQLite database (WAL) in a fresh temp directory (or
--dir), on the same CPython; tether runs on the project's .venv, LangGraph on
bench/.venvs/langgraph (created here, pinned: langgraph==1.2.24,
langgraph-checkpoint-sqlite==3.1.2). Each side runs in its own process, one
after the other. Exact setups: the docstrings of bench/peers/*_durability.py.

(a) Per-step persist latency over --steps steps, p50 and nearest-rank p99.
    A tether step is one model call plus its tool call; a LangGraph step is one
    super-step of a one-node graph (one checkpoint). Timed on each side: only
    the store calls, by a timing subclass of the store: the sum per step of
    every `SQLiteStore.append` (tether: assistant message, tool_intent,
    tool_result, tool message: 4 transactions) vs every `SqliteSaver.put` and
    `put_writes` (LangGraph: 2 transactions). tether's synchronous level is
    fixed (NORMAL, FULL for one `durable=True` append); a default `@tool` makes
    its tool_intent durable, so one fsync per step, which pairs with LangGraph
    at FULL (its default: the saver leaves SQLite's default, FULL); an
    `idempotent=True` tool has no fsync and pairs with LangGraph at NORMAL
    (set on the connection passed to SqliteSaver). Also shown: the raw
    `SQLiteStore.append` of one ~300-byte `message` entry at NORMAL and FULL.
    Per step, tether writes only the step's new entries; LangGraph rewrites the
    whole state (its messages list grows by ~300 characters per step).
(b) Resume of a suspended session by a fresh store object in this process:
    median of --trials, each on its own session with --history steps of
    history and then a suspension (tether: a tool calling `ctx.interrupt`;
    LangGraph: a node calling `interrupt()`). Timed from constructing the store
    (`SQLiteStore(path)` + `Agent(...)` / `sqlite3.connect` + `SqliteSaver` +
    `compile`) to the interrupted tool / node body starting again inside
    `agent.resume_async({id: answer})` / `graph.invoke(Command(resume=...))`.
    Before the tool re-runs, tether takes the lease (a write) and commits the
    `interrupt_answered` entry together with the `tool_intent`: fsynced for a
    plain (non-idempotent) `@tool` (1 fsync), not for an idempotent one (both rows
    are shown; before issue 11 the answer was a fsynced commit of its own, so 2 and
    1 fsyncs). Two more tether rows suspend at a `Confirm` before the tool instead
    (the tool then runs for the first time). LangGraph writes nothing durable
    before the node starts again (its resume value is saved with the step's
    checkpoint, after the node). Also shown ("load"): construction + load
    of the suspended state only (`load` + `fold` / `graph.get_state`). The target:
    tether at most 0.5x LangGraph (issue 11, goal 5).
(c) Bytes per step over --grow-steps steps of a state growing by 200
    characters per step, two ways: the conversation grows (tether: the tool
    returns 200 new characters; LangGraph: the node appends a message dict of
    200 characters) or a state value grows (tether: `ctx.state["log"]`;
    LangGraph: a `log: str` field). Stored payload = sum of
    `length(CAST(col AS BLOB))` over the payload columns (tether: entries.data;
    LangGraph: checkpoints.checkpoint + metadata, writes.value), divided by
    steps; also the file size after `wal_checkpoint(TRUNCATE)` + `VACUUM`.

Ratios are tether / LangGraph (below 1 means tether is cheaper).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from _durability_report import report
from _runs import DURABILITY_ROWS, ensure_venv, log, run, write_json


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--steps", type=int, default=500, help="(a) steps timed")
    p.add_argument("--history", type=int, default=50, help="(b) steps before the suspension")
    p.add_argument("--trials", type=int, default=25, help="(b) resume trials (median)")
    p.add_argument("--grow-steps", type=int, default=100, help="(c) steps of a growing state")
    p.add_argument("--dir", help="directory for the databases (default: system temp)")
    p.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    flags = ["--steps", str(args.steps), "--history", str(args.history)]
    flags += ["--trials", str(args.trials), "--grow-steps", str(args.grow_steps)]
    if args.dir:
        flags += ["--dir", args.dir]
    results: dict[str, dict[str, Any]] = {}
    for row in DURABILITY_ROWS:
        if row.venv:
            ensure_venv(row.venv)
        log(f"durability {row.label} ...")
        results[row.key] = run(row, flags)
    failed = {k: v["error"] for k, v in results.items() if "error" in v}
    for key, error in failed.items():
        log(f"runner failed: {key}: {error}")
    if failed:
        return 1
    meta = {
        "a": f"{args.steps} steps, file DB",
        "b": f"{args.history} steps of history, {args.trials} trials",
        "grow": "200 chars/step",
        "c": f"{args.grow_steps} steps",
    }
    summary = report(results, meta)
    for key in DURABILITY_ROWS:
        print(f"{key.label}: {results[key.key]['version']}; sqlite {results[key.key]['sqlite']}")
    if args.json:
        write_json(args.json, "durability", args, {"results": results, **summary}, machine=True)
        log(f"wrote {args.json}")
    missed = [k for k, v in summary["targets"].items() if v.get("ok") is False]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
