"""The approval decision is a span in the session's trace, written by the process that
decides (the CLI, the HTTP API) at decision time: real processes over one SQLite file,
the deciders traced the way an operator does it (``opentelemetry-instrument`` and the
standard ``OTEL_*`` variables) and exporting over OTLP/HTTP to a real receiver."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_server import call
from otlp_receiver import otlp_receiver

from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.observe import trace_decision

from .test_continuity import roots, spans, step

BIN = Path(sys.executable).parent
TETHER = str(BIN / "tether")
INSTRUMENT = str(BIN / "opentelemetry-instrument")
SUPPORT = str(Path(__file__).parents[1] / "support")
SOURCE = os.environ.get("PYTHONPATH")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


README = Path(__file__).resolve().parents[2] / "README.md"


def readme_exports() -> dict[str, str]:
    """The ``export`` lines of the README's block that traces the CLI and the server."""
    (block,) = [
        b
        for b in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S)
        if "opentelemetry-instrument tether approvals" in b
    ]
    found: dict[str, str] = {}
    for line in block.splitlines():
        if line.startswith("export "):
            found.update(item.split("=", 1) for item in line.split()[1:])
    return found


def otel_env(url: str, **extra: str) -> dict[str, str]:
    """What an operator sets for ``opentelemetry-instrument``: the README's variables and
    the endpoint (the README's OTLP section exports OTEL_EXPORTER_OTLP_ENDPOINT too)."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, SOURCE])),
        **readme_exports(),
        "OTEL_SERVICE_NAME": "tether-approvals",
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        **extra,
    }


def test_the_readme_traces_the_deciders_with_the_standard_variables() -> None:
    assert readme_exports() == {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
    }


def attrs(span: Any) -> dict[str, Any]:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in span.attributes}


def hexid(raw: bytes) -> str:
    return raw.hex()


def suspended(tmp: Path) -> tuple[str, dict[str, Any]]:
    """A traced run (its own process) suspended on one Confirm: (interrupt id, its span)."""
    first = step(tmp, "continue", "start")
    assert first["stop_reason"] == "interrupt"
    (asked,) = roots(spans(tmp))
    return first["interrupts"][0], asked


async def pending_id(db: Path) -> str:
    store = SQLiteStore(str(db))
    try:
        (row,) = await store.approvals.pending(session_id="ticket-42")
        return row.id
    finally:
        await store.close()


def cli(
    env: dict[str, str], *args: str, instrumented: bool = True
) -> subprocess.CompletedProcess[str]:
    prefix = [INSTRUMENT] if instrumented else []
    return subprocess.run(
        [*prefix, TETHER, "approvals", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def decided(*args: str) -> tuple[subprocess.CompletedProcess[str], Any, list[Any]]:
    """``tether approvals *args`` (instrumented, exporting to a receiver), which must succeed:
    (the process, its one decision span, the resources it was exported with)."""
    with otlp_receiver() as (url, received):
        done = cli(otel_env(url), *args)
        assert done.returncode == 0, done.stderr
        (span,) = wait_for(received, "approval confirm:AskFirst")
        resources = [r for r, s in received.spans() if s.name == span.name]
    return done, span, resources


def context_of(span: dict[str, Any]) -> tuple[str, str]:
    ctx = span["context"]
    return ctx["trace_id"].removeprefix("0x"), ctx["span_id"].removeprefix("0x")


def child_attrs(span: Any, asked: dict[str, Any]) -> dict[str, Any]:
    """Check that the exported ``span`` is a child of the suspended run's ``asked`` span
    (same trace, its parent); return its attributes."""
    trace_id, span_id = context_of(asked)
    assert hexid(span.trace_id) == trace_id
    assert hexid(span.parent_span_id) == span_id
    return attrs(span)


def wait_for(received: Any, name: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [s for _, s in received.spans() if s.name == name]
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no span {name!r} received; got {[s.name for _, s in received.spans()]}")


def test_a_cli_decision_is_a_span_in_the_suspended_trace_and_the_resume_continues_it(
    tmp_path: Path,
) -> None:
    interrupt, asked = suspended(tmp_path)
    trace_id = context_of(asked)[0]
    approval_id = asyncio.run(pending_id(tmp_path / "t.db"))
    done, span, resources = decided(
        "approve", approval_id, "--as", "alice", "--store", str(tmp_path / "t.db")
    )
    assert f"approved {approval_id}" in done.stdout
    found = child_attrs(span, asked)
    assert found["tether.approval.decided_by"] == "alice"
    assert found["tether.approval.decision"] == "approve"
    assert found["tether.approval.status"] == "approved"
    assert found["tether.approval.edited"] is False
    assert found["tether.approval.id"] == approval_id
    assert found["tether.approval.via"] == "cli"
    assert found["tether.trace.continued"] is True
    assert found["gen_ai.conversation.id"] == "ticket-42"
    assert found["tether.interrupt.id"] == interrupt
    assert found["gen_ai.tool.name"] == "clean"
    decided_ns = int(found["tether.approval.decided_at"] * 1e9)
    assert span.start_time_unix_nano <= decided_ns <= span.end_time_unix_nano
    service = {kv.key: kv.value.string_value for kv in resources[0].attributes}
    assert service["service.name"] == "tether-approvals"

    second = step(tmp_path, "continue", "resume", json.dumps({interrupt: "approve"}))
    assert second["stop_reason"] == "end_turn"
    found_spans = spans(tmp_path)
    _, resumed = roots(found_spans)
    assert context_of(resumed)[0] == trace_id
    assert resumed["parent_id"] == asked["context"]["span_id"]
    # the resuming process no longer writes a decision span of its own: one per decision
    assert not [s for s in found_spans if s["name"].startswith("approval ")]
    (answered,) = [e for e in resumed["events"] if e["name"] == "tether.interrupt.answered"]
    assert answered["attributes"]["tether.approval.decided_by"] == "alice"


def test_deny_and_an_edited_approval_are_recorded_as_such(tmp_path: Path) -> None:
    """Two sessions: one denied, one approved with edited arguments (checked by --app)."""
    _, asked = suspended(tmp_path)
    db = str(tmp_path / "t.db")
    approval_id = asyncio.run(pending_id(tmp_path / "t.db"))
    _, span, _ = decided("deny", approval_id, "--as", "bob", "-n", "not today", "--store", db)
    found = attrs(span)
    assert (found["tether.approval.decision"], found["tether.approval.status"]) == (
        "deny",
        "denied",
    )
    assert found["tether.approval.decided_by"] == "bob"
    assert "not today" not in json.dumps(found)  # a note is free text: content, not traced
    assert hexid(span.trace_id) == context_of(asked)[0]

    other = tmp_path / "edited"
    other.mkdir()
    _, asked = suspended(other)
    approval_id = asyncio.run(pending_id(other / "t.db"))
    _, span, _ = decided(
        "approve",
        approval_id,
        "--edit",
        '{"pattern": "*.bak"}',
        "--app",
        "traced_resume_child:app_for_edits",
        "--store",
        str(other / "t.db"),
    )
    found = attrs(span)
    assert found["tether.approval.decision"] == "approve_edited"
    assert found["tether.approval.edited"] is True
    assert "*.bak" not in json.dumps(found)  # the edited values are content too
    assert hexid(span.trace_id) == context_of(asked)[0]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, Any, dict[str, Any]]]:
    """``tether serve`` traced by ``opentelemetry-instrument``, exporting to a receiver:
    (base url, alice's token, the receiver's spans, the suspended run's span)."""
    _, asked = suspended(tmp_path)
    db = tmp_path / "t.db"

    async def add_alice() -> str:
        store = SQLiteStore(str(db))
        try:
            return (await store.approvers.add("alice", ["approve:clean"])).token
        finally:
            await store.close()

    token = asyncio.run(add_alice())
    port = free_port()
    with otlp_receiver() as (url, received):
        proc = subprocess.Popen(
            [INSTRUMENT, TETHER, "serve", "--store", str(db), "--port", str(port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=otel_env(url),
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    call("GET", base + "/", timeout=2)
                    break
                except OSError:
                    assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                    assert time.monotonic() < deadline, "tether serve did not start"
                    time.sleep(0.1)
            yield base, token, received, asked
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)


def test_an_http_decision_is_a_span_in_the_suspended_trace(
    served: tuple[str, str, Any, dict[str, Any]], tmp_path: Path
) -> None:
    base, token, received, asked = served
    approval_id = asyncio.run(pending_id(tmp_path / "t.db"))
    status, body = call(
        "POST", f"{base}/api/approvals/{approval_id}/decision", token, {"decision": "approve"}
    )
    assert status == 200, body
    (span,) = wait_for(received, "approval confirm:AskFirst")
    found = child_attrs(span, asked)
    assert found["tether.approval.via"] == "http"
    assert found["tether.approval.decided_by"] == "alice"
    assert found["tether.approval.decision"] == "approve"
    # a refused second decision (409) is not a decision: no second span
    status, _ = call(
        "POST", f"{base}/api/approvals/{approval_id}/decision", token, {"decision": "deny"}
    )
    assert status == 409
    time.sleep(0.5)
    assert len([s for _, s in received.spans() if s.name.startswith("approval ")]) == 1


def test_without_tracing_the_cli_decides_without_importing_opentelemetry(tmp_path: Path) -> None:
    suspended(tmp_path)
    approval_id = asyncio.run(pending_id(tmp_path / "t.db"))
    probe = (
        "import sys\n"
        "from tether.ops.cli import app\n"
        "try:\n"
        f"    app(['approvals', 'approve', {approval_id!r}, '--store', {str(tmp_path / 't.db')!r}])\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('otel loaded:', any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, SOURCE]))}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"approved {approval_id}" in done.stdout
    assert "otel loaded: False" in done.stdout


def test_an_unreadable_trace_context_warns_and_the_decision_stands(tmp_path: Path) -> None:
    suspended(tmp_path)
    db = tmp_path / "t.db"
    approval_id = asyncio.run(pending_id(db))
    with sqlite3.connect(db) as conn:  # the journaled context's entry is damaged on disk
        changed = conn.execute(
            "UPDATE entries SET data = 'not json' WHERE kind = 'audit' AND data LIKE '%otel%'"
        ).rowcount
    assert changed == 1
    with otlp_receiver() as (url, received):
        done = cli(otel_env(url), "approve", approval_id, "--as", "alice", "--store", str(db))
        time.sleep(0.5)
        assert not [s for _, s in received.spans() if s.name.startswith("approval ")]
    assert done.returncode == 0, done.stderr
    assert f"approved {approval_id}" in done.stdout
    assert f"approval {approval_id} was approved; its trace span was not written" in done.stderr

    async def status() -> str:
        store = SQLiteStore(str(db))
        try:
            return (await store.approvals.get(approval_id)).status
        finally:
            await store.close()

    assert asyncio.run(status()) == "approved"


async def test_trace_decision_in_code_links_the_current_span_and_refuses_a_pending_row(
    tmp_path: Path, otel: Any
) -> None:
    _, asked = await asyncio.to_thread(suspended, tmp_path)
    store = SQLiteStore(str(tmp_path / "t.db"))
    try:
        (row,) = await store.approvals.pending(session_id="ticket-42")
        with pytest.raises(ConfigurationError, match=f"approval {row.id} is pending, not decided"):
            await trace_decision(store, row, tracer_provider=otel.tracer_provider)
        decided = await store.approvals.decide(row.id, "approve", decided_by="carol")
        tracer = otel.tracer_provider.get_tracer("app")
        with tracer.start_as_current_span("app request") as request:
            await trace_decision(store, decided, tracer_provider=otel.tracer_provider)
    finally:
        await store.close()
    (span,) = otel.named("approval ")
    trace_id, span_id = context_of(asked)
    assert format(span.context.trace_id, "032x") == trace_id
    assert span.parent is not None
    assert format(span.parent.span_id, "016x") == span_id
    (link,) = span.links
    assert link.context.span_id == request.get_span_context().span_id
    assert span.attributes["tether.approval.via"] == "api"


async def test_a_session_that_left_no_trace_context_gets_a_decision_in_a_new_trace(
    tmp_path: Path, otel: Any
) -> None:
    """An untraced run suspended: the decision span starts its own trace (and says so)."""
    from scripted_resume_child import build

    agent = build(str(tmp_path / "u.db"), tmp_path / "fx")
    result = await agent.invoke_async("clean up the temp files")
    assert result.stop_reason == "interrupt"
    store = SQLiteStore(str(tmp_path / "u.db"))
    try:
        (row,) = await store.approvals.pending(session_id="ticket-42")
        decided = await store.approvals.decide(row.id, "deny", decided_by="dan")
        await trace_decision(store, decided, via="cli", tracer_provider=otel.tracer_provider)
    finally:
        await store.close()
    (span,) = otel.named("approval ")
    assert span.parent is None
    assert span.attributes["tether.trace.continued"] is False
    assert span.attributes["tether.approval.decision"] == "deny"
