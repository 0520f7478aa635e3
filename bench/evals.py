"""Eval runner throughput: tether's against pydantic_evals on the same 200 scripted cases,
and ``tether policy check`` throughput, in one run.

Usage: `.venv/bin/python bench/evals.py [--cases 200] [--rounds 3] [--sessions 1000]`

Rows (each a subprocess, bench/peers/*): tether in memory (``store=None``), tether with
every run journaled in SQLite (the usual eval: each run a session to open in the
timeline), and pydantic_evals 2.62 with a pydantic_ai FunctionModel agent, in its own
venv under bench/.venvs (created on first use). Each case builds a fresh agent that makes
one tool call and answers; two evaluators score it; concurrency 8 in both. Cases/s is
the cases over the median of --rounds runs. Then bench/policy_check.py's store of
--sessions recorded sessions is checked once (recorded calls/s).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _runs import Row, Venv, ensure_venv, log, run  # noqa: E402

PYDANTIC_EVALS = Venv("pydantic-evals", ("pydantic-evals==2.62.0", "pydantic-ai-slim==2.62.0"))
ROWS = (
    Row("tether", "tether (in memory)", "tether", "tether_evals.py", "scripted"),
    Row("tether-sqlite", "tether (journaled, SQLite)", "tether", "tether_evals.py", "scripted",
        variant="sqlite"),
    Row("pydantic-evals", "pydantic_evals 2.62", "peer", "pydantic_evals_runner.py",
        "FunctionModel", PYDANTIC_EVALS),
)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=1000)
    args = parser.parse_args()
    ensure_venv(PYDANTIC_EVALS)
    flags = ["--cases", str(args.cases), "--rounds", str(args.rounds)]
    rates: dict[str, float] = {}
    print(f"{args.cases} scripted cases, concurrency 8, median of {args.rounds} rounds")
    for row in ROWS:
        log(f"running {row.label} ...")
        result = run(row, flags)
        if "error" in result:
            print(f"  {row.label:30} error: {result['error']}")
            continue
        rates[row.key] = args.cases / result["median_s"]
        print(f"  {row.label:30} {rates[row.key]:8,.0f} cases/s "
              f"(median {result['median_s']:.3f} s, best {result['best_s']:.3f} s)")  # fmt: skip
    peer = rates.get("pydantic-evals")
    for key in ("tether", "tether-sqlite"):
        if peer and key in rates:
            print(f"  ratio {key} / pydantic_evals: {rates[key] / peer:.2f}x")
    policy(args.sessions)


def policy(sessions: int) -> None:
    from policy_check import check

    sys.path.insert(0, str(BENCH.parent / "tests" / "support"))
    import policy_store as ps

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traffic.db"
        began = time.perf_counter()
        ps.build(path, sessions)
        built = time.perf_counter() - began
        calls, seconds = asyncio.run(check(path))
    print(f"policy check: {sessions} recorded sessions (built in {built:.1f} s), {calls} calls "
          f"in {seconds:.2f} s = {calls / seconds:,.0f} recorded calls/s")  # fmt: skip


if __name__ == "__main__":
    main()
