"""Whether the application configured OpenTelemetry, looked up without importing it."""

from __future__ import annotations

import sys
from typing import Any


def global_tracer_provider() -> Any | None:
    """The global tracer provider the application (or ``opentelemetry-instrument``) set, or
    None: OpenTelemetry was never imported, or no real provider is set. Free when off."""
    otel_trace = sys.modules.get("opentelemetry.trace")
    if otel_trace is None:
        return None
    provider = otel_trace.get_tracer_provider()
    if isinstance(provider, otel_trace.ProxyTracerProvider | otel_trace.NoOpTracerProvider):
        return None
    return provider
