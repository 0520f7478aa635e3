"""What the timeline could not show: counted, labelled notes; a traced session's saved
trace context (an ``audit`` entry) is known and is no note."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from ops_agents import transfer_agent
from ops_cli import cli

from tether.durable import MemoryStore, SQLiteStore
from tether.observe import instrument
from tether.ops.timeline import read_timeline, timeline_of


async def _traced_and_suspended(db: Path) -> None:
    store = SQLiteStore(db)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    agent = transfer_agent(store, "traced", [])
    instrument(agent, tracer_provider=provider)
    result = await agent.invoke_async("pay bob")
    assert result.stop_reason == "interrupt"
    kinds = [e.kind for e in await store.read_entries("traced", 0)]
    assert "audit" in kinds  # the suspended run's trace context
    await store.close()


def test_a_traced_suspended_session_has_no_unreadable_entries(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    asyncio.run(_traced_and_suspended(db))
    result = cli("sessions", "timeline", "traced", "--store", str(db), "--json")
    assert result.exit_code == 0, result.output
    timeline = json.loads(result.output)
    assert (timeline["unreadable_entries"], timeline["notes"]) == ([], [])
    text = cli("sessions", "timeline", "traced", "--store", str(db)).output
    assert "could not read" not in text
    assert "does not show" not in text


async def _timeline(entries: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    store = MemoryStore()
    await store.create("s")
    await store.append("s", 0, entries)  # type: ignore[arg-type]
    data = await read_timeline(store, "s")
    assert data is not None
    return timeline_of(data)


async def test_unreadable_and_unknown_entries_are_counted_and_labelled_by_seq() -> None:
    running = ("status", {"status": "running", "started_at": 1.0, "by": "w", "resume": False})
    t = await _timeline(
        [
            running,  # seq 1
            *[("state", {"state": {"n": i}}) for i in range(12)],  # seqs 2-13: known, no row
            ("usage", {"not": "usage"}),  # seq 14: unreadable
            ("audit", {"future": {"x": 1}}),  # seq 15: an audit record nobody knows
            ("audit", {"future": {"x": 2}}),  # seq 16
            ("status", {"status": "completed", "reason": None}),
        ]
    )
    assert t["unreadable_entries"] == [14]
    assert t["notes"] == [
        "1 journal entry tether could not read (seq 14)",
        "2 journal entries of a kind the timeline does not show: audit ['future'] (seqs 15, 16)",
    ]
    assert [s["kind"] for s in t["steps"]] == ["run", "end"]
