"""A traced workflow: one trace per run, a span per node run (``execute_tool <node>``,
with ``tether.workflow.*`` attributes) at every depth and each node agent's
``invoke_agent`` under it; ``instrument(wf)`` traces it whole, in one process or
resumed in another."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether import Agent, ConfigurationError, RunError
from tether.observe import instrument
from tether.workflows import Graph, Loop, Sequential, StepContext

sys.path.insert(0, str(Path(__file__).parents[1] / "support"))

from workflow_agents import echo, review_workflow


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


def spans_of(exporter: InMemorySpanExporter) -> list[Any]:
    return list(exporter.get_finished_spans())


def parent_of(spans: list[Any], span: Any) -> Any:
    (found,) = [s for s in spans if s.context.span_id == span.parent.span_id]
    return found


def nodes_named(spans: list[Any], name: str) -> list[Any]:
    return [s for s in spans if s.name == f"execute_tool {name}"]


def test_instrument_wf_traces_every_node_at_every_depth_in_one_trace(traces: Any) -> None:
    """``instrument(wf)`` alone: the nested Parallel's own session and its branches'
    agents are traced too, each node run a span with its path and step."""
    provider, exporter = traces
    wf = review_workflow(None, Path("/dev/null"), confirm=False)
    instrument(wf, tracer_provider=provider)
    result = wf.run("the plan")
    assert result.stop_reason == "end_turn"
    spans = spans_of(exporter)
    assert len({s.context.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.parent is None]
    assert root.name == "invoke_agent pipeline"
    assert root.attributes["tether.workflow.kind"] == "sequential"
    assert "gen_ai.request.model" not in root.attributes  # the conductor is no LLM
    paths = {
        s.attributes["tether.workflow.path"]: s
        for s in spans
        if s.name.startswith("execute_tool") and "tether.workflow.path" in s.attributes
    }
    assert set(paths) == {"draft#1", "review#2", "summary#3", "review#2/legal#1", "review#2/tech#2"}
    for path, step, kind in [
        ("draft#1", 1, "function"),
        ("review#2", 2, "workflow"),
        ("summary#3", 3, "agent"),
    ]:
        assert paths[path].attributes["tether.workflow.step"] == step
        assert paths[path].attributes["tether.workflow.node_kind"] == kind
        assert parent_of(spans, paths[path]) is root
    # the nested workflow's session under its node's span; its branches siblings under it
    [inner] = [s for s in spans if s.name == "invoke_agent parallel"]  # Parallel's name
    assert parent_of(spans, inner) is paths["review#2"]
    assert inner.attributes["tether.workflow.kind"] == "parallel"
    for branch in ("legal#1", "tech#2"):
        span = paths[f"review#2/{branch}"]
        assert parent_of(spans, span) is inner
        assert span.attributes["tether.workflow.step"] == 1  # one batch: run at once
        name = branch.split("#")[0]
        [run] = [s for s in spans if s.name == f"invoke_agent {name}"]
        assert parent_of(spans, run) is span
        chats = [s for s in spans if s.name == "chat scripted" and parent_of(spans, s) is run]
        assert chats  # the node agent's own model calls, under its run
    # the conductors' decisions: events of their runs, never chat spans
    assert not [s for s in spans if s.name.startswith("chat workflow:")]
    decided = [e for e in root.events if e.name == "tether.workflow.decided"]
    assert [list(e.attributes["tether.workflow.nodes"]) for e in decided] == [
        ["draft"],
        ["review"],
        ["summary"],
    ]
    assert [e.name for e in inner.events if e.name.startswith("tether.workflow")] == [
        "tether.workflow.decided",
        "tether.workflow.answered",
    ]


def test_loop_rounds_and_graph_supersteps_are_span_attributes(traces: Any) -> None:
    provider, exporter = traces
    loop = Loop(Agent(echo("w"), name="w"), max_rounds=3, name="again")
    instrument(loop, tracer_provider=provider)
    assert loop.run("x").stop_reason == "end_turn"
    rounds = nodes_named(spans_of(exporter), "w")
    assert sorted(s.attributes["tether.workflow.round"] for s in rounds) == [1, 2, 3]
    assert sorted(s.attributes["tether.workflow.path"] for s in rounds) == ["w#1", "w#2", "w#3"]
    exporter.clear()

    graph = Graph(name="g")
    for name in ("plan", "a", "b", "join"):
        graph.add_node(name, Agent(echo(name), name=name))
    graph.add_edge("plan", "a").add_edge("plan", "b").add_edge("a", "join").add_edge("b", "join")
    graph.set_entry("plan")
    instrument(graph, tracer_provider=provider)
    assert graph.run("go").stop_reason == "end_turn"
    spans = spans_of(exporter)
    supersteps = {
        s.attributes["tether.workflow.node"]: s.attributes["tether.workflow.superstep"]
        for s in spans
        if "tether.workflow.superstep" in s.attributes
    }
    assert supersteps == {"plan": 1, "a": 2, "b": 2, "join": 3}


def test_a_node_agent_traced_already_keeps_its_tracing_and_the_workflow_is_refused_twice(
    traces: Any,
) -> None:
    provider, exporter = traces
    a = Agent(echo("a"), name="a")
    mine = instrument(a, tracer_provider=provider)
    wf = Sequential(a, Sequential(Agent(echo("b"), name="b"), name="inner"), name="flow")
    theirs = instrument(wf, tracer_provider=provider)
    assert theirs is not mine
    with pytest.raises(ConfigurationError, match="already traced"):
        instrument(wf, tracer_provider=provider)
    assert wf.run("go").stop_reason == "end_turn"
    names = sorted(s.name for s in spans_of(exporter) if s.name.startswith("invoke_agent"))
    assert names == ["invoke_agent a", "invoke_agent b", "invoke_agent flow", "invoke_agent inner"]


def test_a_node_failure_quoting_a_masked_secret_is_masked_in_every_span(traces: Any) -> None:
    """Span status and stop detail go through the tree's one redaction path: the secret a
    node agent's call masked is hidden where a later node's error quotes it."""
    from secret_tree import SECRET, login

    from tether.models import ScriptedModel

    def leaf(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return "done: " + messages[-1].tool_results[0].content
        args = {"user": "alice", "password": SECRET}
        return {"tool_calls": [{"id": "l1", "name": "login", "args": args}]}

    def check(step: StepContext) -> str:
        raise RuntimeError(f"cannot check {step.input}")

    provider, exporter = traces
    ops = Agent(ScriptedModel(leaf), tools=[login], name="ops")
    wf = Sequential(ops, check, name="flow")
    instrument(wf, tracer_provider=provider, capture_content=True)
    with pytest.raises(RunError):
        wf.run("go")
    spans = spans_of(exporter)
    text = "\n".join(s.to_json() for s in spans)
    assert SECRET not in text
    [failed] = nodes_named(spans, "check")
    assert failed.status.status_code.name == "ERROR"
    assert "logged in with ***" in (failed.status.description or "")
    [root] = [s for s in spans if s.parent is None]
    assert "logged in with ***" in root.attributes["tether.stop.detail"]


CHILD = Path(__file__).parents[1] / "support" / "traced_workflow_child.py"


def traced_step(tmp: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(CHILD),
            str(tmp / "t.db"),
            str(tmp / "effects"),
            str(tmp / "spans"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_workflow_resumed_in_another_process_continues_its_trace_node_by_node(
    tmp_path: Path,
) -> None:
    first = traced_step(tmp_path, "start")
    assert first["stop_reason"] == "interrupt"  # legal's write, two workflows down
    answers = json.dumps({iid: "approve" for iid in first["interrupts"]})
    assert traced_step(tmp_path, "resume", answers)["stop_reason"] == "end_turn"
    spans = [json.loads(line) for line in (tmp_path / "spans").read_text().splitlines()]
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    by_id = {s["context"]["span_id"]: s for s in spans}
    roots = [s for s in spans if s["name"] == "invoke_agent pipeline"]
    [started] = [s for s in roots if not s["attributes"]["tether.resumed"]]
    [resumed] = [s for s in roots if s["attributes"]["tether.resumed"]]
    assert started["parent_id"] is None
    assert resumed["parent_id"] == started["context"]["span_id"]  # continued, not linked
    # the resumed legal run sits under the resumed review branch, node by node
    [legal] = [
        s for s in spans if s["name"] == "invoke_agent legal" and s["attributes"]["tether.resumed"]
    ]
    chain = []
    span = legal
    while span["parent_id"] in by_id:
        span = by_id[span["parent_id"]]
        chain.append((span["name"], span["attributes"].get("tether.workflow.path")))
    assert chain == [
        ("execute_tool legal", "review#2/legal#1"),
        ("invoke_agent parallel", None),
        ("execute_tool review", "review#2"),
        ("invoke_agent pipeline", None),
        ("invoke_agent pipeline", None),
    ]
    assert by_id[legal["parent_id"]]["end_time"] > legal["start_time"]
    # in the first process, the node spans holding the approval were ended interrupted
    for path in ("review#2", "review#2/legal#1"):
        [asked] = [
            s
            for s in spans
            if s["attributes"].get("tether.workflow.path") == path
            and s["attributes"]["tether.tool.status"] == "interrupted"
        ]
        [raised] = [e for e in asked["events"] if e["name"] == "tether.interrupt.raised"]
        assert raised["attributes"]["tether.interrupt.name"].endswith(
            "legal#1/confirm:ConfirmWrites"
        )
        if path == "review#2":  # the top session's node: the id the Result gave
            assert raised["attributes"]["tether.interrupt.id"] == first["interrupts"][0]
    # summary ran only after the resume, as the third step of the first task
    [summary] = [s for s in spans if s["attributes"].get("tether.workflow.path") == "summary#3"]
    assert by_id[summary["parent_id"]] is resumed


@pytest.fixture(scope="module")
def phoenix(private_dir: Path) -> Iterator[Any]:
    """A real Phoenix server (tests/support/phoenix_backend.py), as tests/observe uses."""
    from phoenix_backend import PIN, executable, phoenix_server, venv

    command = executable()
    if command is None:
        pytest.skip(
            f"Phoenix is not installed in {venv()}: `make phoenix` creates that venv with "
            f"{PIN} (its pins clash with ours, so it is not in the dev extra)"
        )
    workdir = private_dir / "phoenix-workflows"
    workdir.mkdir()
    with phoenix_server(workdir, command) as server:
        yield server


def test_a_traced_workflow_reads_back_from_phoenix_as_one_tree_of_node_spans(
    phoenix: Any,
) -> None:
    import uuid

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    project = f"tether-wf-{uuid.uuid4().hex[:12]}"
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": project}))
    exporter = OTLPSpanExporter(endpoint=phoenix.traces_endpoint, timeout=10)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    wf = review_workflow(None, Path("/dev/null"), confirm=False)
    instrument(wf, tracer_provider=provider)
    assert wf.run("the plan").stop_reason == "end_turn"
    assert provider.force_flush(10_000)
    provider.shutdown()
    spans = phoenix.wait_for_spans(project, 15)
    assert len(spans) == 15  # 3 workflow / agent runs, 6 node and tool calls, 4 chats, ...
    assert len({s["context"]["trace_id"] for s in spans}) == 1
    by_id = {s["context"]["span_id"]: s for s in spans}
    [root] = [s for s in spans if s["parent_id"] is None]
    assert root["name"] == "invoke_agent pipeline"
    assert root["attributes"]["tether.workflow.kind"] == "sequential"
    nodes = {
        s["attributes"]["tether.workflow.path"]: s
        for s in spans
        if "tether.workflow.path" in s["attributes"]
    }
    assert set(nodes) == {"draft#1", "review#2", "summary#3", "review#2/legal#1", "review#2/tech#2"}
    [inner] = [s for s in spans if s["name"] == "invoke_agent parallel"]
    assert by_id[inner["parent_id"]] is nodes["review#2"]
    for branch in ("review#2/legal#1", "review#2/tech#2"):
        assert by_id[nodes[branch]["parent_id"]] is inner
    assert not [s for s in spans if s["name"].startswith("chat workflow:")]


GLOBAL = """
import json, sys
from pathlib import Path
sys.path.insert(0, {support!r})
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from workflow_agents import review_workflow
from tether.observe import instrument
spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
counts = []
wf = review_workflow(None, Path("/dev/null"), confirm=False)
for _ in range(3):
    wf.agent.reset()
    wf.run("x")
    counts.append(len(spans.get_finished_spans()))
    spans.clear()
wf = review_workflow(None, Path("/dev/null"), confirm=False)
instrument(wf)
wf.run("x")
counts.append(len(spans.get_finished_spans()))
print(json.dumps(counts))
"""


def test_under_a_global_provider_each_node_run_is_traced_once_run_after_run() -> None:
    """A node agent's runs reuse one copy of its hook registry: a child run (auto-traced
    under the global provider, or by ``instrument(wf)``) is not traced a second time."""
    script = GLOBAL.format(support=str(Path(__file__).parents[1] / "support"))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [15, 15, 15, 15]


def test_a_swarms_handoff_is_two_node_spans_each_agent_under_its_own(traces: Any) -> None:
    from swarm_agents import support_swarm

    provider, exporter = traces
    swarm = support_swarm(None, Path("/dev/null"))
    instrument(swarm, tracer_provider=provider)
    assert swarm.run("refund my order").stop_reason == "interrupt"  # billing's refund
    spans = spans_of(exporter)
    assert len({s.context.trace_id for s in spans}) == 1
    found = {
        s.attributes["tether.workflow.path"]: s
        for s in spans
        if "tether.workflow.path" in s.attributes
    }
    assert set(found) == {"triage#1", "billing#2"}
    assert {s.attributes["tether.workflow.node_kind"] for s in found.values()} == {"agent"}
    for path, name in (("triage#1", "triage"), ("billing#2", "billing")):
        [run] = [s for s in spans if s.name == f"invoke_agent {name}"]
        assert parent_of(spans, run) is found[path]
    # the node span that holds the pending approval says so, with its address
    assert found["billing#2"].attributes["tether.tool.status"] == "interrupted"
    [raised] = [e for e in found["billing#2"].events if e.name == "tether.interrupt.raised"]
    assert raised.attributes["tether.interrupt.name"] == "billing#2/confirm:ConfirmRefunds"


AS_TOOL = """
import json, sys
sys.path.insert(0, {support!r})
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from workflow_agents import echo
from tether import Agent
from tether.models import ScriptedModel
from tether.workflows import Sequential
spans = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))
trace.set_tracer_provider(provider)
flow = Sequential(Agent(echo("a"), name="a"), name="flow")
def turn(messages, specs):
    if messages[-1].role == "tool":
        return "done"
    return {{"tool_calls": [{{"id": "c1", "name": "flow", "args": {{"task": "go"}}}}]}}
Agent(ScriptedModel(turn), tools=[flow.as_tool("flow")], name="lead")("x")
found = spans.get_finished_spans()
by_id = {{s.context.span_id: s for s in found}}
print(json.dumps({{s.name: (by_id[s.parent.span_id].name if s.parent else None) for s in found
                  if not s.name.startswith("chat")}}))
"""


def test_a_workflow_as_an_agents_tool_is_traced_under_its_call_by_a_global_provider() -> None:
    script = AS_TOOL.format(support=str(Path(__file__).parents[1] / "support"))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "invoke_agent lead": None,
        "execute_tool flow": "invoke_agent lead",
        "invoke_agent flow": "execute_tool flow",
        "execute_tool a": "invoke_agent flow",
        "invoke_agent a": "execute_tool a",
    }


def test_the_conductors_decisions_record_no_genai_metrics(traces: Any) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    provider, _ = traces
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    wf = review_workflow(None, Path("/dev/null"), confirm=False)
    instrument(wf, tracer_provider=provider, meter_provider=meters)
    assert wf.run("the plan").stop_reason == "end_turn"
    models: dict[str, set[str]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name.startswith("gen_ai.client."):
                    for point in metric.data.data_points:
                        models.setdefault(metric.name, set()).add(
                            str(point.attributes.get("gen_ai.request.model"))
                        )
    meters.shutdown()
    assert models == {  # the node agents' scripted model only, never workflow:...
        "gen_ai.client.token.usage": {"scripted"},
        "gen_ai.client.operation.duration": {"scripted"},
    }
