"""A traced workflow: one trace per run, a span per node run (``execute_tool <node>``)
and each node agent's ``invoke_agent`` under it. (A nested workflow's own session is
built inside its outer one and is not traced: planned.)"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether import Agent
from tether.observe import instrument
from tether.workflows import Sequential

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import echo


@pytest.fixture
def traces() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def test_a_workflow_run_is_one_trace_with_a_span_per_node(traces: Any) -> None:
    provider, exporter = traces
    a, b, c = (Agent(echo(n), name=n) for n in ("a", "b", "c"))
    wf = Sequential(a, b, c, name="flow")
    for agent in (wf.agent, a, b, c):
        instrument(agent, tracer_provider=provider)
    assert wf.run("go").stop_reason == "end_turn"
    spans = list(exporter.get_finished_spans())
    assert len({s.context.trace_id for s in spans}) == 1
    by_id = {s.context.span_id: s for s in spans}
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent flow"
    nodes = [s for s in spans if s.name.startswith("execute_tool")]
    assert sorted(s.name for s in nodes) == ["execute_tool a", "execute_tool b", "execute_tool c"]
    assert all(by_id[s.parent.span_id] is root for s in nodes if s.parent is not None)
    for name in ("a", "b", "c"):
        [run] = [s for s in spans if s.name == f"invoke_agent {name}"]
        assert run.parent is not None
        assert by_id[run.parent.span_id].name == f"execute_tool {name}"
