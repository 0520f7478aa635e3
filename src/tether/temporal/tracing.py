"""One trace across a workflow, its activities and the human's wait.

``TetherPlugin(tracing=...)`` adds temporalio's ``TracingInterceptor`` (the client's
``StartWorkflow`` span, the workflow's ``RunWorkflow`` and ``HandleUpdate``, every
activity's ``StartActivity`` / ``RunActivity``), and traces the agents its workflows run
with tether's own spans, which start under the current OpenTelemetry context the
interceptor sets in the workflow: the client's ``StartWorkflow`` trace. A replayed
workflow (a new worker, a cache eviction) re-runs the loop: its spans are quiet then
(:mod:`tether.observe.quiet`), so none is exported twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from tether.agent_ref import AgentRef

SCOPE = "tether.temporal"
REPLAYER = "replay-"
"""The key of a Replayer's plugin (a Replayer names its own task queue ``replay-...``)."""
_PROVIDERS: dict[str, TracerProvider | None] = {}
"""Task queue -> the tracer provider its plugin traces with (None: the global one);
a queue absent here is not traced by the plugin."""


def wanted(tracing: bool | None, provider: TracerProvider | None) -> bool:
    """Whether a plugin traces: ``tracing`` if given, else whether a tracer provider is
    configured (``tracer_provider=`` or a global one)."""
    if tracing is not None and not isinstance(tracing, bool):
        raise ConfigurationError(
            f"TetherPlugin(tracing=...) takes True, False or None (None: traced when a "
            f"tracer provider is set), got {tracing!r}"
        )
    try:
        from opentelemetry import trace
    except ImportError:
        if tracing:
            raise ConfigurationError(
                "TetherPlugin(tracing=True) needs OpenTelemetry: pip install 'tether[otel]'"
            ) from None
        return False
    if tracing is not None:
        return tracing
    global_set = not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    return provider is not None or global_set


def guard() -> None:
    """Make any tether tracing in a workflow replay-safe (the plugin calls it, traced or
    not: a global provider traces agents too): spans are quiet while the workflow replays,
    and tracing makes no store call there (each would be a local activity, so turning
    tracing on or off would change the workflow's history)."""
    try:
        from tether.observe.quiet import quiet_when, storeless_when
    except ImportError:  # no OpenTelemetry: nothing traces
        return
    quiet_when(replaying)
    storeless_when(in_workflow)


def in_workflow() -> bool:
    """Whether the code running now is workflow code."""
    from temporalio import workflow

    return workflow.in_workflow()


def interceptor(provider: TracerProvider | None) -> Any:
    """temporalio's ``TracingInterceptor`` on ``provider`` (None: the global one); its
    spans name a failure by its type only (:mod:`tether.temporal.scrubbed`)."""
    from opentelemetry import trace
    from temporalio.contrib.opentelemetry import TracingInterceptor

    from tether.temporal.scrubbed import ScrubbedTracer

    return TracingInterceptor(ScrubbedTracer(trace.get_tracer(SCOPE, tracer_provider=provider)))


def replaying() -> bool:
    """Whether the code running now is a workflow replaying its history."""
    from temporalio import workflow

    return workflow.in_workflow() and workflow.unsafe.is_replaying()


def serve_tracing(task_queue: str, provider: TracerProvider | None, traced: bool) -> None:
    """Trace the agents of ``task_queue``'s workflows with ``provider`` (or not)."""
    if traced:
        _PROVIDERS[task_queue] = provider
    else:
        _PROVIDERS.pop(task_queue, None)


def tracer_for(task_queue: str) -> Callable[[AgentRef], None] | None:
    """What traces one agent of a workflow on ``task_queue`` (None: its plugin does not
    trace). ``tree.proxied`` applies it to every agent of the tree it builds, the fresh
    children of a parallel sub-agent tool included."""
    key = task_queue
    if key not in _PROVIDERS and task_queue.startswith(REPLAYER):
        key = REPLAYER
    if key not in _PROVIDERS:
        return None
    provider = _PROVIDERS[key]

    def trace(agent: AgentRef) -> None:
        from tether.observe.tracing import instrument, is_traced

        if not is_traced(agent):
            instrument(agent, tracer_provider=provider)

    return trace
