"""One trace across suspend and resume, in two real processes over one SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tether.durable import SQLiteStore

CHILD = Path(__file__).parents[1] / "support" / "traced_resume_child.py"


def step(tmp: Path, mode: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """One step of traced_resume_child.py in its own process (under ``env`` when given);
    it must succeed; returns the JSON line it printed last."""
    done = subprocess.run(
        [
            sys.executable,
            str(CHILD),
            str(tmp / "t.db"),
            str(tmp / "fx"),
            str(tmp / "spans"),
            mode,
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def spans(tmp: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp / "spans").read_text().splitlines() if line]


def roots(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in found if s["name"].startswith("invoke_agent")]


def test_a_resume_in_another_process_continues_the_suspended_trace(tmp_path: Path) -> None:
    first = step(tmp_path, "continue", "start")
    assert first["stop_reason"] == "interrupt"
    (interrupt,) = first["interrupts"]
    second = step(tmp_path, "continue", "resume", json.dumps({interrupt: "approve"}))
    assert second["stop_reason"] == "end_turn"
    found = spans(tmp_path)
    asked, resumed = roots(found)
    assert asked["context"]["trace_id"] == resumed["context"]["trace_id"]
    assert resumed["parent_id"] == asked["context"]["span_id"]
    assert {s["context"]["trace_id"] for s in found} == {asked["context"]["trace_id"]}
    assert asked["attributes"]["tether.stop_reason"] == "interrupt"
    assert resumed["attributes"]["tether.resumed"] is True
    (answered,) = [e for e in resumed["events"] if e["name"] == "tether.interrupt.answered"]
    attrs = answered["attributes"]
    assert {k: v for k, v in attrs.items() if not k.startswith("tether.approval.")} == {
        "tether.interrupt.id": interrupt,
        "tether.interrupt.source": "intervention",
        "tether.answer": "approve",
    }
    # the answer decided its approval row (one decision path): the event names the row
    assert {k for k in attrs if k.startswith("tether.approval.")} == {
        "tether.approval.id",
        "tether.approval.status",
        "tether.approval.decision",
        "tether.approval.edited",
        "tether.approval.decided_by",
        "tether.approval.decided_at",
    }
    assert (attrs["tether.approval.status"], attrs["tether.approval.decision"]) == (
        "approved",
        "approve",
    )
    assert attrs["tether.approval.edited"] is False
    assert attrs["tether.approval.decided_by"].endswith("(agent.resume)")
    clean = [s for s in found if s["name"] == "execute_tool clean"]
    assert [s["attributes"]["tether.tool.status"] for s in clean] == ["interrupted", "ok"]
    assert clean[1]["parent_id"] == resumed["context"]["span_id"]


def test_link_mode_resumes_in_a_new_trace_linked_to_the_suspended_one(tmp_path: Path) -> None:
    first = step(tmp_path, "link", "start")
    step(tmp_path, "link", "resume", json.dumps({first["interrupts"][0]: "approve"}))
    asked, resumed = roots(spans(tmp_path))
    assert resumed["parent_id"] is None
    assert resumed["context"]["trace_id"] != asked["context"]["trace_id"]
    (link,) = resumed["links"]
    assert link["context"]["span_id"] == asked["context"]["span_id"]


async def test_the_trace_context_is_journaled_as_a_w3c_traceparent(tmp_path: Path) -> None:
    first = step(tmp_path, "continue", "start")
    store = SQLiteStore(str(tmp_path / "t.db"))
    try:
        entries = await store.read_entries("ticket-42")
    finally:
        await store.close()
    (saved,) = [e.data["otel"] for e in entries if e.kind == "audit" and "otel" in e.data]
    asked = roots(spans(tmp_path))[0]
    trace_id = asked["context"]["trace_id"].removeprefix("0x")
    span_id = asked["context"]["span_id"].removeprefix("0x")
    assert saved["traceparent"].startswith(f"00-{trace_id}-{span_id}-")  # then the trace flags
    assert saved["interrupts"] == [
        {"id": first["interrupts"][0], "source": "intervention", "name": "confirm:AskFirst"}
    ]


def test_a_resume_here_reads_the_context_another_process_journaled(
    tmp_path: Path, otel: Any
) -> None:
    """No in-process memory of the first run: the context comes from the SQLite journal."""
    import asyncio

    from scripted_resume_child import build

    from tether.observe import instrument

    first = step(tmp_path, "continue", "start")
    agent = build(str(tmp_path / "t.db"), tmp_path / "fx")
    instrument(agent, tracer_provider=otel.tracer_provider)
    asyncio.run(agent.resume_async({first["interrupts"][0]: "approve"}))  # type: ignore[arg-type]
    (resumed,) = otel.named("invoke_agent")
    asked = roots(spans(tmp_path))[0]
    assert format(resumed.context.trace_id, "032x") == asked["context"]["trace_id"].removeprefix(
        "0x"
    )


async def test_only_the_context_of_the_run_being_resumed_is_continued(tmp_path: Path) -> None:
    """A traced run suspends, an untraced process resumes it and it suspends again: the
    next resume must not join the first run's (stale) trace."""
    from tether.observe import continuity

    store = SQLiteStore(str(tmp_path / "j.db"))
    try:
        await store.create("s")
        saved = {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01", "interrupts": []}
        traced_run = [
            ("status", {"status": "running"}),
            ("status", {"status": "suspended", "reason": None}),
            ("audit", {"otel": saved}),
        ]
        written = await store.append("s", 0, traced_run)
        version = written[-1].seq
        assert await continuity.load(store, "s", version) == saved
        untraced_run = [
            ("interrupt_answered", {"answers": {}}),
            ("status", {"status": "running"}),
            ("status", {"status": "suspended", "reason": None}),
        ]
        written = await store.append("s", version, untraced_run)
        assert await continuity.load(store, "s", written[-1].seq) is None
    finally:
        await store.close()


def test_a_malformed_saved_context_starts_a_new_trace() -> None:
    from tether.observe import continuity

    assert continuity.span_context({"traceparent": "00-zz-11-01"}) is None
    assert continuity.span_context({"traceparent": 42}) is None
    assert continuity.span_context({}) is None


async def test_the_approval_decided_between_the_processes_is_a_span_in_the_trace(
    tmp_path: Path,
) -> None:
    """Asked in process 1, decided by alice in code (store API + trace_decision, with the
    decider's own provider), resumed in process 2. The CLI and HTTP deciders:
    test_decision_span.py."""
    import asyncio

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    from tether.observe import trace_decision

    first = step(tmp_path, "continue", "start")
    (interrupt,) = first["interrupts"]
    store = SQLiteStore(str(tmp_path / "t.db"))
    try:
        (row,) = await store.approvals.pending(session_id="ticket-42")
        assert row.interrupt_id == interrupt
        decided = await store.approvals.decide(row.id, "approve", decided_by="alice")
        with (tmp_path / "spans").open("a", encoding="utf-8") as out:
            provider = TracerProvider()
            exporter = ConsoleSpanExporter(
                out=out, formatter=lambda s: s.to_json(indent=None) + "\n"
            )
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            await trace_decision(store, decided, tracer_provider=provider)
            provider.shutdown()
    finally:
        await store.close()
    answers = json.dumps({interrupt: "approve"})
    second = await asyncio.to_thread(step, tmp_path, "continue", "resume", answers)
    assert second["stop_reason"] == "end_turn"
    found = spans(tmp_path)
    asked, resumed = roots(found)
    (approval,) = [s for s in found if s["name"].startswith("approval ")]
    assert approval["name"] == "approval confirm:AskFirst"
    assert approval["context"]["trace_id"] == asked["context"]["trace_id"]
    assert approval["parent_id"] == asked["context"]["span_id"]
    assert approval["attributes"]["tether.approval.decided_by"] == "alice"
    assert approval["attributes"]["tether.approval.decision"] == "approve"
    assert approval["attributes"]["tether.approval.edited"] is False
    assert approval["attributes"]["gen_ai.tool.name"] == "clean"
    assert approval["start_time"] <= approval["end_time"]
    (answered,) = [e for e in resumed["events"] if e["name"] == "tether.interrupt.answered"]
    assert answered["attributes"]["tether.approval.decided_by"] == "alice"
    assert answered["attributes"]["tether.approval.decided_at"] == decided.decided_at


async def test_an_unreadable_store_means_a_new_trace_and_a_warning_not_a_failure(
    tmp_path: Path, caplog: Any
) -> None:
    from tether.observe import continuity

    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 100)
    store = SQLiteStore(str(bad))
    try:
        assert await continuity.load(store, "s", 5) is None
        assert await continuity.decided_approvals(store, "s") == {}
    finally:
        await store.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "tether"]
    assert any("trace context not read" in w and "not an SQLite database" in w for w in warned)
    assert any("approvals not read for tracing" in w for w in warned)
