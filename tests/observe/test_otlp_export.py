"""Export over OTLP/HTTP (the SDK's protobuf exporter) to a real HTTP receiver on
127.0.0.1 that decodes the requests with opentelemetry-proto."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from otlp_receiver import otlp_receiver

from tether import Agent
from tether.models import ScriptedModel
from tether.observe import instrument

from .test_spans import ADD, add

README = Path(__file__).resolve().parents[2] / "README.md"


def attrs(span: object) -> dict[str, object]:
    out: dict[str, object] = {}
    for kv in span.attributes:  # type: ignore[attr-defined]
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_spans_and_metrics_reach_an_otlp_http_receiver() -> None:
    with otlp_receiver() as (url, received):
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=10))
        )
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=f"{url}/v1/metrics", timeout=10),
            export_interval_millis=3_600_000,
        )
        meter_provider = MeterProvider(metric_readers=[reader])
        agent = Agent(model=ScriptedModel([ADD, "3"]), tools=[add])
        instrument(agent, tracer_provider=tracer_provider, meter_provider=meter_provider)
        agent("add")
        assert tracer_provider.force_flush(10_000)
        assert meter_provider.force_flush(10_000)
        tracer_provider.shutdown()
        meter_provider.shutdown()
    spans = {span.name: span for _, span in received.spans()}
    assert set(spans) == {"invoke_agent tether", "chat scripted", "execute_tool add"}
    root = spans["invoke_agent tether"]
    assert attrs(root)["gen_ai.conversation.id"] == agent.session_id
    assert attrs(spans["execute_tool add"])["tether.tool.status"] == "ok"
    assert spans["execute_tool add"].parent_span_id == root.span_id
    assert {s.trace_id for s in spans.values()} == {root.trace_id}
    assert {
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "tether.tool.calls",
    } <= received.metric_names()
    assert received.content_types == {"application/x-protobuf"}


def test_the_readme_snippet_exports_with_the_standard_environment_variables(tmp_path: Path) -> None:
    (block,) = [
        b
        for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
        if "OTLPSpanExporter" in b
    ]
    placeholder = "agent = Agent(model=..., tools=[...])"
    assert placeholder in block
    script = block.replace(
        placeholder,
        "from tether.models import ScriptedModel\nagent = Agent(model=ScriptedModel(['ok']))",
    )
    (tmp_path / "app.py").write_text(script)
    with otlp_receiver() as (url, received):
        env = {
            **os.environ,
            "OTEL_EXPORTER_OTLP_ENDPOINT": url,
            "OTEL_SERVICE_NAME": "readme-agent",
        }
        env.pop("TETHER_TRACING", None)
        done = subprocess.run(
            [sys.executable, str(tmp_path / "app.py")],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    found = received.spans()
    assert sorted(span.name for _, span in found) == ["chat scripted", "invoke_agent tether"]
    resource = found[0][0]
    service = {kv.key: kv.value.string_value for kv in resource.attributes}["service.name"]
    assert service == "readme-agent"
