"""bench/subagents.py's report: every peer row gets its ratio against tether."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import subagents  # noqa: E402


def test_the_report_compares_tether_with_every_peer(capsys: pytest.CaptureFixture[str]) -> None:
    rows = subagents._rows(None)

    def timed(us: float) -> dict[str, object]:
        return {"repeats": [{"median_us": us}]}

    results = {
        "tether:plain": timed(50),
        "tether:delegate": timed(100),
        "strands:plain": timed(500),
        "strands:delegate": timed(1000),
        "openai-agents:plain": timed(1500),
        "openai-agents:delegate": timed(2000),
    }
    summary = subagents.report(rows, results, "test")
    assert summary["tether/strands"] == 0.1
    assert summary["tether/openai-agents"] == 0.05
    assert summary["strands"]["delegation_us"] == 500
    out = capsys.readouterr().out
    assert "tether delegate / OpenAI Agents SDK delegate: 0.05" in out
