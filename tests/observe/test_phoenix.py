"""Export to a real tracing backend: tether's spans go over OTLP/HTTP to Arize Phoenix
(started by the `phoenix` fixture on 127.0.0.1) and are read back through its REST API."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tether import Agent
from tether.models import ScriptedModel
from tether.observe import instrument

from .test_continuity import step
from .test_decision_span import cli, otel_env, pending_id
from .test_spans import ADD, NoAdd, add

PROJECT_KEY = "openinference.project.name"
"""The resource attribute Phoenix files spans under (one project per test here)."""


def project() -> str:
    return f"tether-{uuid.uuid4().hex[:12]}"


def exporting_to(phoenix: Any, name: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({PROJECT_KEY: name}))
    exporter = OTLPSpanExporter(endpoint=phoenix.traces_endpoint, timeout=10)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def named(spans: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [s for s in spans if s["name"] == name]


def test_a_run_with_a_denied_call_reads_back_from_phoenix_as_one_span_tree(phoenix: Any) -> None:
    name = project()
    provider = exporting_to(phoenix, name)
    agent = Agent(model=ScriptedModel([ADD, ADD, "done"]), tools=[add], interventions=[NoAdd()])
    instrument(agent, tracer_provider=provider, agent_name="calc")
    assert agent("add twice").text == "done"
    assert provider.force_flush(10_000)
    provider.shutdown()

    spans = phoenix.wait_for_spans(name, 6)
    assert sorted(s["name"] for s in spans) == sorted(
        ["invoke_agent calc"] + ["chat scripted"] * 3 + ["execute_tool add"] * 2
    )
    (root,) = named(spans, "invoke_agent calc")
    assert root["parent_id"] is None
    assert {s["context"]["trace_id"] for s in spans} == {root["context"]["trace_id"]}
    children = [s for s in spans if s is not root]
    assert {s["parent_id"] for s in children} == {root["context"]["span_id"]}
    attrs = root["attributes"]
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.agent.name"] == "calc"
    assert attrs["gen_ai.conversation.id"] == agent.session_id
    assert attrs["tether.stop_reason"] == "end_turn"
    assert attrs["tether.usage.model_calls"] == 3
    chats = named(spans, "chat scripted")
    assert {c["attributes"]["gen_ai.operation.name"] for c in chats} == {"chat"}
    assert {c["attributes"]["gen_ai.request.model"] for c in chats} == {"scripted"}
    tools = named(spans, "execute_tool add")
    assert [t["attributes"]["tether.tool.status"] for t in tools] == ["denied", "denied"]
    for span in tools:
        assert span["status_code"] == "ERROR"
        assert "no-add" in span["status_message"]
        assert span["attributes"]["gen_ai.tool.name"] == "add"
        (deny,) = [e for e in span["events"] if e["name"] == "tether.tool.deny"]
        assert deny["attributes"]["tether.reason"].startswith("denied by policy 'no-add'")
        verdicts = [e for e in span["events"] if e["name"] == "tether.policy.verdict"]
        assert [v["attributes"]["tether.action"] for v in verdicts] == ["Deny"]


def test_asked_decided_and_resumed_in_three_processes_is_one_trace_in_phoenix(
    phoenix: Any, tmp_path: Path
) -> None:
    """The run suspends (process 1), alice approves from the CLI (process 2, under
    opentelemetry-instrument), the session resumes (process 3): Phoenix shows one trace."""
    name = project()
    env = otel_env(phoenix.url, OTEL_RESOURCE_ATTRIBUTES=f"{PROJECT_KEY}={name}")

    def child(*args: str) -> dict[str, Any]:
        return step(tmp_path, "continue", *args, env=env)

    first = child("start")
    (interrupt,) = first["interrupts"]
    approval_id = asyncio.run(pending_id(tmp_path / "t.db"))
    store = str(tmp_path / "t.db")
    decided = cli(env, "approve", approval_id, "--as", "alice", "--store", store)
    assert decided.returncode == 0, decided.stderr
    assert child("resume", json.dumps({interrupt: "approve"}))["stop_reason"] == "end_turn"

    spans = phoenix.wait_for_spans(name, 9)
    asked, resumed = sorted(named(spans, "invoke_agent tether"), key=lambda s: s["start_time"])
    trace_id = asked["context"]["trace_id"]
    assert {s["context"]["trace_id"] for s in spans} == {trace_id}
    (approval,) = named(spans, "approval confirm:AskFirst")
    assert approval["parent_id"] == asked["context"]["span_id"]
    assert resumed["parent_id"] == asked["context"]["span_id"]
    assert approval["attributes"]["tether.approval.decided_by"] == "alice"
    assert approval["attributes"]["tether.approval.via"] == "cli"
    assert asked["attributes"]["tether.stop_reason"] == "interrupt"
    assert resumed["attributes"]["tether.resumed"] is True
    assert resumed["attributes"]["tether.stop_reason"] == "end_turn"
    assert asked["end_time"] <= approval["start_time"] <= resumed["start_time"]
    clean = sorted(named(spans, "execute_tool clean"), key=lambda s: s["start_time"])
    assert [c["attributes"]["tether.tool.status"] for c in clean] == ["interrupted", "ok"]
    assert clean[1]["parent_id"] == resumed["context"]["span_id"]


def test_the_makefile_installs_the_phoenix_the_fixture_expects() -> None:
    from phoenix_backend import PIN, ROOT

    makefile = (ROOT / "Makefile").read_text()
    assert f"PHOENIX_PIN := {PIN}\n" in makefile
    assert "unit: $(STAMP) browser phoenix" in makefile  # make test builds the venv
