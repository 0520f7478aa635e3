"""Per-invocation cost of tether as the conversation grows (issue 11's history table).

Usage: `.venv/bin/python bench/scaling.py [--sizes 10,100,1000,5000] [--invocations 20]
[--rows memory,sqlite,hooks,sqlite-hooks] [--json PATH]`.

One invocation, identical in every row: a prompt, 2 model calls and 1 tool call
(`async def add`). The model is an O(1) fake (it looks at the last message only and
reports constant usage), so the model side is not measured. Before timing, the
session is given n messages of history (user / assistant-with-tool-call / tool /
assistant turns of ~60 characters each): in memory by setting `agent.messages`, with a
store by appending the same messages as journal entries (as if earlier runs wrote them),
then one warm-up invocation. Then `--invocations` invocations are timed one by one
(`perf_counter_ns` around `await agent.invoke_async(...)`), with the SAME agent object
(the usual server/worker shape: the process that ran the last step runs the next);
the history grows by 4 messages per invocation. Reported: the median, in ms.

Rows: `memory` (no store); `sqlite` (SQLiteStore file, WAL, in a temp dir);
`hooks` (one allow-all AGENT-HOOKS interceptor, no store); `sqlite-hooks` (both);
`maf-hooks` (not run by default: MAF + AGENT-HOOKS, the same interceptor and history
turns in MAF's types, in a session holding them; bench/peers/maf_hooks_scaling.py in
bench/.venvs/maf, created by bench/overhead.py's `--only hooks` first).
With a store, each row also reports transactions (`BEGIN` statements on the store's
connections) and fsync'd commits (`synchronous = FULL` commits) per invocation, and the
journal/audit rows written, counted over the timed invocations.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from tether import Agent, tool
from tether.durable import SQLiteStore
from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta
from tether.messages import Message, TextBlock, ToolCall, ToolResult, Usage
from tether.models.base import ModelRequest

PROMPT = "What is 1 + 2?"
ANSWER = "The answer is 3."
FILLER = "Some earlier turn of the conversation, about sixty characters."


class FlatModel:
    """O(1) fake model: a tool call first, the answer once the last message is a tool result."""

    name = "flat"

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        last = request.messages[-1]
        if last.role == "tool":
            yield TextDelta(ANSWER)
            yield ModelStop("end_turn", Usage(10, 4))
            return
        yield ToolCallDelta(0, f"call_{len(request.messages)}", "add", {"a": 1, "b": 2})
        yield ModelStop("tool_use", Usage(10, 6))


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class AllowAll:
    name = "allow-all"

    def intercept(self, context: dict[str, Any]) -> dict[str, str]:
        return {"decision": "allow"}


def history(n: int) -> list[Message]:
    out: list[Message] = []
    turn = 0
    while len(out) < n:
        cid = f"h{turn}"
        out.append(Message("user", [TextBlock(f"{FILLER} {turn}")]))
        out.append(Message("assistant", [ToolCall(cid, "add", {"a": turn, "b": 1})]))
        out.append(Message("tool", [ToolResult(cid, "add", str(turn + 1))]))
        out.append(Message("assistant", [TextBlock(f"{FILLER} answer {turn}")]))
        turn += 1
    return out[: n - n % 4] if n % 4 else out


class Counter:
    """Counts statements run on a store's SQLite connections (set_trace_callback)."""

    def __init__(self) -> None:
        self.begins = 0
        self.full = 0
        self._full_on = False

    def __call__(self, sql: str) -> None:
        head = sql.lstrip()[:40].upper()
        if head.startswith("BEGIN"):
            self.begins += 1
        elif head.startswith("PRAGMA SYNCHRONOUS = FULL"):
            self._full_on = True
        elif head.startswith("PRAGMA SYNCHRONOUS = NORMAL"):
            self._full_on = False
        elif head.startswith("COMMIT") and self._full_on:
            self.full += 1


async def seed(store: SQLiteStore, sid: str, messages: list[Message]) -> None:
    await store.create(sid)
    version = 0
    for start in range(0, len(messages), 500):
        chunk = [("message", {"message": m.to_dict()}) for m in messages[start : start + 500]]
        written = await store.append(sid, version, chunk, status="completed")  # type: ignore[arg-type]
        version = written[-1].seq


def run_peer(row: str, n: int, invocations: int) -> dict[str, Any]:
    """A row measured by a peer runner in its own venv (one JSON line on stdout)."""
    bench = Path(__file__).resolve().parent
    python = bench / ".venvs" / "maf" / "bin" / "python"
    runner = bench / "peers" / "maf_hooks_scaling.py"
    args = [str(python), "-W", "ignore", str(runner), "--n", str(n)]
    out = subprocess.run(
        [*args, "--invocations", str(invocations)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


async def run_row(row: str, n: int, invocations: int, folder: Path) -> dict[str, Any]:
    store: SQLiteStore | None = None
    sid = f"bench-{row}-{n}"
    if row.startswith("sqlite"):
        store = SQLiteStore(folder / f"{sid}.db")
        await seed(store, sid, history(n))
    hooks = [AllowAll()] if row.endswith("hooks") else []
    agent = Agent(
        model=FlatModel(),
        tools=[add],
        store=store,
        session_id=sid if store is not None else None,
        agent_hooks=hooks or None,
    )
    if store is None:
        agent.messages = history(n)
    await agent.invoke_async(PROMPT)  # warm-up (and, with a store, the first load)
    counter = Counter()
    if store is not None:
        for conn in (store._writer(), store._read_conn()):  # bench only: count statements
            conn.set_trace_callback(counter)
        rows_before = _rows(store)
    times: list[float] = []
    for _ in range(invocations):
        began = time.perf_counter_ns()
        result = await agent.invoke_async(PROMPT)
        times.append((time.perf_counter_ns() - began) / 1e6)
        assert result.text == ANSWER, (result.stop_reason, result.reason)
    out: dict[str, Any] = {"row": row, "n": n, "median_ms": statistics.median(times)}
    if store is not None:
        for conn in (store._writer(), store._read_conn()):
            conn.set_trace_callback(None)
        rows_after = _rows(store)
        out |= {
            "transactions": counter.begins / invocations,
            "fsyncs": counter.full / invocations,
            "entries": (rows_after[0] - rows_before[0]) / invocations,
            "audit": (rows_after[1] - rows_before[1]) / invocations,
        }
        await store.close()
    return out


def _rows(store: SQLiteStore) -> tuple[int, int]:
    conn = store._read_conn()
    entries = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
    audit = conn.execute("SELECT count(*) FROM audit").fetchone()[0]
    return int(entries), int(audit)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--sizes", default="10,100,1000,5000")
    p.add_argument("--rows", default="memory,sqlite,hooks,sqlite-hooks")
    p.add_argument("--invocations", type=int, default=20)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = args.rows.split(",")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows:
            for n in sizes:
                if row == "maf-hooks":
                    res = run_peer(row, n, args.invocations)
                else:
                    res = asyncio.run(run_row(row, n, args.invocations, Path(tmp)))
                results.append(res)
                print(json.dumps(res), file=sys.stderr, flush=True)
    print(f"| per invocation (median ms) | {' | '.join(f'n={n:,}' for n in sizes)} |")
    print(f"|---|{'---|' * len(sizes)}")
    for row in rows:
        cells = [r for r in results if r["row"] == row]
        medians = " | ".join(f"{r['median_ms']:.2f}" for r in cells)
        print(f"| {row} | {medians} |")
    for row in rows:
        cells = [r for r in results if r["row"] == row and "transactions" in r]
        if cells:
            c = cells[-1]
            print(
                f"{row}: {c['transactions']:.1f} transactions, {c['fsyncs']:.1f} fsync'd commits, "
                f"{c['entries']:.1f} journal entries, {c['audit']:.1f} audit records per invocation"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
