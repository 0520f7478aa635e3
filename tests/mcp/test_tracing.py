"""The MCP SDK's spans of a tool call are children of tether's ``execute_tool`` span.

A child process sets a global tracer provider (so tether traces automatically and the
SDK's own tracer records) exporting over OTLP/HTTP to a real receiver on 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from otlp_receiver import otlp_receiver

from .conftest import FIXTURE

SCRIPT = """
import sys
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from tether import Agent
from tether.mcp import MCPServer
from tether.models import ScriptedModel

turns = [{"tool_calls": [{"name": "echo", "args": {"text": "hi"}}]},
         {"tool_calls": [{"name": "echo", "args": {"text": "again"}}]}, "done"]
with MCPServer.stdio(sys.executable, [sys.argv[1], "stdio"], name="fx") as server:
    agent = Agent(ScriptedModel(turns), tools=[server], store=None)
    assert agent.run("go").text == "done"
provider.force_flush()
"""


def test_the_sdk_spans_of_a_call_are_children_of_its_execute_tool_span(tmp_path: Path):
    (tmp_path / "app.py").write_text(SCRIPT)
    with otlp_receiver() as (url, received):
        env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": url}
        env.pop("TETHER_TRACING", None)
        done = subprocess.run(
            [sys.executable, str(tmp_path / "app.py"), FIXTURE],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        spans = [span for _, span in received.spans()]
    tools = [s for s in spans if s.name == "execute_tool echo"]
    calls = [s for s in spans if s.name == "MCP send tools/call echo"]
    assert len(tools) == 2
    assert len(calls) == 2
    (invoke,) = [s for s in spans if s.name.startswith("invoke_agent")]
    for tool, sent in zip(tools, calls, strict=True):
        assert sent.trace_id == invoke.trace_id
        assert sent.parent_span_id == tool.span_id
    # The session's own spans (initialize, the listing) belong to no call: the
    # connection is shared by every agent and run that holds the server.
    opened = [s for s in spans if s.name.startswith("MCP send initialize")]
    assert opened
    assert all(s.parent_span_id == b"" for s in opened)
