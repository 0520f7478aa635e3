"""Quiet spells (tether.observe.quiet): a run traced while a registered predicate holds
records no span and no metric and behaves the same; spans started after it join the parent's trace."""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from tether import Agent, tool
from tether.models import ScriptedModel
from tether.observe.quiet import QuietTracer, is_quiet, quiet_when

ADD = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}
_QUIET = [False]


def _quiet() -> bool:
    return _QUIET[0]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_a_run_in_a_quiet_spell_records_no_span_or_metric_and_the_next_one_does(otel: Any) -> None:
    quiet_when(_quiet)
    quiet_when(_quiet)  # registering twice is registering once
    agent = Agent(model=ScriptedModel([ADD, "3", ADD, "3"]), tools=[add])
    otel.instrument(agent)
    _QUIET[0] = True
    try:
        assert is_quiet()
        assert agent("1+2?").text == "3"
    finally:
        _QUIET[0] = False
    assert otel.spans() == []
    assert otel.points("tether.tool.calls") == []
    assert otel.points("gen_ai.client.operation.duration") == []
    assert agent("1+2?").text == "3"
    (calls,) = otel.points("tether.tool.calls")
    assert calls.value == 1
    assert [p.count for p in otel.points("gen_ai.client.operation.duration")] == [2]
    assert [s.name for s in otel.spans()] == [
        "chat scripted",
        "execute_tool add",
        "chat scripted",
        "invoke_agent tether",
    ]


def test_a_quiet_span_stands_in_for_its_parent(otel: Any) -> None:
    quiet_when(_quiet)
    tracer = QuietTracer(otel.tracer_provider.get_tracer("test"))
    with tracer.start_as_current_span("outer") as outer:
        _QUIET[0] = True
        try:
            stand_in = tracer.start_span("replayed")
        finally:
            _QUIET[0] = False
        assert not stand_in.is_recording()
        assert stand_in.get_span_context() == outer.get_span_context()
        later = tracer.start_span("live", context=trace.set_span_in_context(stand_in))
        later.end()
    (live,) = [s for s in otel.spans() if s.name == "live"]
    assert live.parent is not None
    assert live.parent.span_id == outer.get_span_context().span_id
    assert [s.name for s in otel.spans()] == ["live", "outer"]
