"""tether with OpenTelemetry tracing (run with the project's .venv python).

The workload and callbacks of tether_overhead.py (async tool), plus tracing:
- variant `off`: opentelemetry imported, no tracer provider set (tether registers nothing);
- variants `sdk-noop` / `sdk-batch`: the shared SDK setup of _otel_setup.py (one counting,
  dropping in-memory exporter behind a SimpleSpanProcessor / BatchSpanProcessor, and a
  MeterProvider with an in-memory reader), the same the traced Strands and MAF rows use.
The agent is traced through `tether.observe.instrument(agent, tracer_provider=...,
meter_provider=...)` (the same cost as the automatic tracing a global provider turns on).
"""

from __future__ import annotations

import opentelemetry.trace  # noqa: F401  (loaded, as in an application that uses it)
import tether_overhead
from _harness import Subject, main


async def build(variant: str) -> Subject:
    if variant not in ("off", "sdk-noop", "sdk-batch"):
        raise SystemExit(f"unknown variant {variant!r}")
    subject = await tether_overhead.build("")
    agent = subject.reset.__self__  # type: ignore[attr-defined]  (the bound agent.reset)
    if variant != "off":
        from _otel_setup import Tracing

        from tether.observe import instrument

        tracing = Tracing(variant)
        instrument(
            agent,
            tracer_provider=tracing.tracer_provider,
            meter_provider=tracing.meter_provider,
        )
        subject.report = tracing.report
    subject.name = f"tether + OTel ({variant})"
    subject.setup += f"; tracing: {variant}"
    return subject


if __name__ == "__main__":
    main(build)
