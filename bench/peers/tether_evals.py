"""tether's eval runner on the shared scripted cases (bench/evals.py runs it).

Each case: a fresh Agent (ScriptedModel: one ``search`` call, then the answer), scored by
Contains (the expected text) and ToolTrajectory (one search call). ``--variant sqlite``
journals every run in a SQLite file (the default eval use: each run a session).
Prints one JSON line: the best and median seconds of --rounds runs of all cases.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _eval_cases import CONCURRENCY, cases, search_result

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.evals import Case, Contains, Dataset, ToolTrajectory
from tether.messages import Message
from tether.models import ScriptedModel


@tool
def search(query: str, limit: int = 5) -> str:
    """Search for something."""
    return search_result(query, limit)


def script(messages: list[Message], _specs: list[dict[str, Any]]) -> Any:
    done = next((m for m in reversed(messages) if m.role == "tool"), None)
    if done is not None:
        return f"done: {done.tool_results[0].content}"
    prompt = next(m.text for m in messages if m.role == "user")
    return {"tool_calls": [{"name": "search", "args": {"query": prompt.split(" ", 1)[1]}}]}


def make(**options: Any) -> Agent:
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(script), tools=[search], **options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", choices=["", "sqlite"], default="")
    args = parser.parse_args()
    dataset = Dataset(
        [Case(name, text, expected_output=want, expected_tools=["search"])
         for name, text, want in cases(args.cases)],
        [Contains(), ToolTrajectory()],
    )  # fmt: skip
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            store = SQLiteStore(Path(tmp) / f"evals{round_}.db") if args.variant else None
            began = time.perf_counter()
            report = dataset.evaluate(make, concurrency=CONCURRENCY, store=store)
            times.append(time.perf_counter() - began)
            if report.pass_rate != 1.0:
                raise SystemExit(f"not every case passed: {report.pass_rate}")
            if store is not None:
                from tether.sync_run import run_sync

                run_sync(store.close())
    print(json.dumps({"cases": args.cases, "best_s": min(times),
                      "median_s": statistics.median(times)}))  # fmt: skip


if __name__ == "__main__":
    main()
