"""The tracing setup every traced overhead row shares (tether's and the peers'): the
OpenTelemetry SDK with its spans handed to ONE in-memory exporter that counts and drops
them, and a MeterProvider with an in-memory metric reader.

Variants: `sdk-noop` (SimpleSpanProcessor: each span is exported as it ends, on the
calling thread) and `sdk-batch` (BatchSpanProcessor: a queue and an export thread, the
setup production uses with OTLP). `traced_globally` builds a peer's untraced row with
these providers made global first (the traced Strands and MAF rows). Imported only by
traced runners: it needs
opentelemetry-sdk, which every venv that runs one has (bench/_runs.py pins it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from _harness import Subject
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

VARIANTS = ("sdk-noop", "sdk-batch")


class CountingExporter(SpanExporter):
    """Accepts every span, keeps a count and the names seen, and drops the span."""

    def __init__(self) -> None:
        self.count = 0
        self.names: set[str] = set()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        if len(self.names) < 64:
            self.names.update(s.name for s in spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class Tracing:
    """One row's providers and exporter; `report(n)` summarises what was exported."""

    def __init__(self, variant: str) -> None:
        if variant not in VARIANTS:
            raise SystemExit(f"unknown tracing variant {variant!r}; known: {VARIANTS}")
        self.variant = variant
        self.exporter = CountingExporter()
        self.tracer_provider = TracerProvider()
        processor = BatchSpanProcessor if variant == "sdk-batch" else SimpleSpanProcessor
        self.tracer_provider.add_span_processor(processor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])

    def set_global(self) -> None:
        """Make these the global providers (how Strands and MAF pick tracing up)."""
        from opentelemetry import metrics, trace

        trace.set_tracer_provider(self.tracer_provider)
        metrics.set_meter_provider(self.meter_provider)

    def report(self, invocations: int) -> dict[str, Any]:
        self.tracer_provider.force_flush(30_000)
        return {
            "spans_exported": self.exporter.count,
            "spans_per_invocation": self.exporter.count / invocations if invocations else 0,
            "span_names": sorted(self.exporter.names),
        }


async def traced_globally(
    build: Callable[[str], Awaitable[Subject]], variant: str, name: str
) -> Subject:
    """A peer's plain overhead row (``build("")``), built after `variant`'s providers were
    made the global ones: Strands and MAF trace through the global providers."""
    tracing = Tracing(variant)
    tracing.set_global()
    subject = await build("")
    subject.name = f"{name} + OTel ({variant})"
    subject.setup += f"; tracing: global SDK providers, {variant}"
    subject.report = tracing.report
    return subject
