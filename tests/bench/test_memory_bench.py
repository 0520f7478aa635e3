"""bench/memory.py's measurements run, small, on a real SQLite store: searches find hits
and an append's two timings are both measured."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import memory  # noqa: E402
from tether.durable import SQLiteStore  # noqa: E402


async def test_search_latency_finds_hits_and_times_both_paths(tmp_path: Path) -> None:
    result = await memory.search_latency(lambda: SQLiteStore(tmp_path / "s.db"), 60, 10)
    assert result["hits"] > 0
    assert 0 < result["p50"] <= result["p99"]
    assert 0 < result["raw_p50"] <= result["raw_p99"]


async def test_append_index_cost_times_indexed_and_plain_appends(tmp_path: Path) -> None:
    result = await memory.append_index_cost(lambda: SQLiteStore(tmp_path / "a.db"), 20)
    assert result["indexed_p50"] > 0
    assert result["plain_p50"] > 0
