"""tether with OpenTelemetry tracing (run with the project's .venv python).

The workload and callbacks of tether_overhead.py (async tool), plus tracing:
- variant `off`: opentelemetry imported, no tracer provider set (tether registers nothing);
- variant `sdk-noop`: the OpenTelemetry SDK (TracerProvider + SimpleSpanProcessor, and a
  MeterProvider with an in-memory reader) exporting to an exporter that drops every span:
  the cost of building, recording and ending the spans and metrics;
- variant `sdk-batch`: the same with a BatchSpanProcessor (a queue and an export thread)
  in front of the dropping exporter, the setup production uses with OTLP.
The agent is traced through `tether.observe.instrument(agent, tracer_provider=...)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import opentelemetry.trace  # noqa: F401  (loaded, as in an application that uses it)
import tether_overhead
from _harness import Subject, main


class _Drop:
    """A SpanExporter that accepts and drops every span."""

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


async def build(variant: str) -> Subject:
    if variant not in ("off", "sdk-noop", "sdk-batch"):
        raise SystemExit(f"unknown variant {variant!r}")
    subject = await tether_overhead.build("")
    agent = subject.reset.__self__  # type: ignore[attr-defined]  (the bound agent.reset)
    if variant != "off":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

        from tether.observe import instrument

        tracer_provider = TracerProvider()
        processor = BatchSpanProcessor if variant == "sdk-batch" else SimpleSpanProcessor
        tracer_provider.add_span_processor(processor(_Drop()))  # type: ignore[arg-type]
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        instrument(agent, tracer_provider=tracer_provider, meter_provider=meter_provider)
    subject.name = f"tether + OTel ({variant})"
    subject.setup += f"; tracing: {variant}"
    return subject


if __name__ == "__main__":
    main(build)
