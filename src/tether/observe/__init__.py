"""OpenTelemetry traces and metrics for tether agents (``pip install 'tether[otel]'``).

Tracing follows the OpenTelemetry GenAI semantic conventions: one ``invoke_agent``
span per invocation or resume, a ``chat`` span per model call attempt and an
``execute_tool`` span per tool call, with governance decisions as span events; :func:`trace_decision` adds an approval
decision, from the process that decides it, to the suspended session's trace.
An agent is traced from its first run that starts while the application has set a
global tracer provider (before or after building it), or explicitly with
:func:`instrument` (or ``hooks=[Tracing(...)]``).
Importing ``tether`` never imports OpenTelemetry; this package does.
"""

from __future__ import annotations

from tether.observe.decision import trace_decision
from tether.observe.tracing import ResumeMode, Tracing, instrument

__all__ = ["ResumeMode", "Tracing", "instrument", "trace_decision"]
