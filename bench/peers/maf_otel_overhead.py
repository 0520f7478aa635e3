"""Microsoft Agent Framework with its OpenTelemetry tracing on (run with
bench/.venvs/maf/bin/python).

The workload and middleware of maf_overhead.py (no session), with the global tracer and
meter providers set, before the agent is built, to the shared SDK setup of
_otel_setup.py (the exporter and processors tether's traced rows use). MAF's
instrumentation is on by default and records through the global providers (its
invoke_agent, chat and execute_tool spans, and its metrics); sensitive data stays off,
as tether's content capture does. Variants: `sdk-noop`, `sdk-batch`.
"""

from __future__ import annotations

import maf_overhead
from _harness import Subject, main
from _otel_setup import traced_globally


async def build(variant: str) -> Subject:
    return await traced_globally(maf_overhead.build, variant, "MAF")


if __name__ == "__main__":
    main(build)
