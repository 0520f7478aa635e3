"""Strands Agents with its OpenTelemetry tracing on (run with bench/.venvs/strands/bin/python).

The workload and callbacks of strands_overhead.py, with the global tracer and meter
providers set, before the agent is built, to the shared SDK setup of _otel_setup.py (the
exporter and processors tether's traced rows use): Strands traces through the global
providers (its agent, cycle, model and tool spans, and its metrics), no other switch.
Variants: `sdk-noop` (SimpleSpanProcessor), `sdk-batch` (BatchSpanProcessor).
"""

from __future__ import annotations

import strands_overhead
from _harness import Subject, main
from _otel_setup import traced_globally


async def build(variant: str) -> Subject:
    return await traced_globally(strands_overhead.build, variant, "Strands")


if __name__ == "__main__":
    main(build)
