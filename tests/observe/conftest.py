"""The OpenTelemetry SDK with in-memory span and metric readers, per test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether import Agent
from tether.observe import Tracing, instrument


@dataclass
class Otel:
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    spans_out: InMemorySpanExporter
    metrics_in: InMemoryMetricReader

    def instrument(self, agent: Agent, **options: Any) -> Tracing:
        return instrument(
            agent,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            **options,
        )

    def spans(self) -> list[ReadableSpan]:
        return list(self.spans_out.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def points(self, name: str) -> list[Any]:
        """The data points of metric ``name``."""
        data = self.metrics_in.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Otel(tracer_provider, meter_provider, exporter, reader)
    tracer_provider.shutdown()
    meter_provider.shutdown()


@pytest.fixture(scope="session")
def phoenix(private_dir: Path, request: pytest.FixtureRequest) -> Any:
    """A real Phoenix server for the session (tests/support/phoenix_backend.py)."""
    from phoenix_backend import PIN, executable, phoenix_server, venv

    command = executable()
    if command is None:
        pytest.skip(
            f"Phoenix is not installed in {venv()}: `make phoenix` creates that venv with "
            f"{PIN} (its pins clash with ours, so it is not in the dev extra)"
        )
    workdir = private_dir / "phoenix"
    workdir.mkdir()
    with phoenix_server(workdir, command) as server:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"phoenix serve answered in {server.started_in_s:.1f} s")
        yield server
