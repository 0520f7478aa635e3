"""Quiet spells: while a registered predicate holds, tether's spans and metrics are not
recorded (:func:`quiet_when`), or its tracing keeps off the store (:func:`storeless_when`).

A host that re-executes code it has already run (a Temporal workflow replaying its
history after a worker restart) registers a predicate with :func:`quiet_when`; the spans a
:class:`~tether.observe.Tracing` starts meanwhile are non-recording stand-ins carrying
their parent's context, so the hooks run exactly as before (the same store calls, the
same bookkeeping) and nothing is exported twice (nor counted twice: see
:func:`quiet_instruments`), while a span started afterwards under a
stand-in still joins the parent's trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import Counter, Histogram
from opentelemetry.trace import NonRecordingSpan

_PREDICATES: list[Callable[[], bool]] = []
_STORELESS: list[Callable[[], bool]] = []


def quiet_when(predicate: Callable[[], bool]) -> None:
    """Record no tether span started while ``predicate()`` is true (registering the same
    predicate again changes nothing). It must be cheap and never raise."""
    if predicate not in _PREDICATES:
        _PREDICATES.append(predicate)


def is_quiet() -> bool:
    """Whether a registered predicate holds now."""
    return any(predicate() for predicate in _PREDICATES)


def storeless_when(predicate: Callable[[], bool]) -> None:
    """Make a :class:`~tether.observe.Tracing` read and write no store for a run that
    starts while ``predicate()`` is true: a suspension's trace context stays in memory,
    and no approval rows are read for span attributes. For code whose store calls must be
    the same whether it is traced or not (a Temporal workflow's are its history)."""
    if predicate not in _STORELESS:
        _STORELESS.append(predicate)


def is_storeless() -> bool:
    """Whether a predicate registered with :func:`storeless_when` holds now."""
    return any(predicate() for predicate in _STORELESS)


class QuietTracer(trace.Tracer):
    """``tracer``, except while :func:`is_quiet`: then a span is a stand-in for its parent."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def start_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> trace.Span:
        if is_quiet():
            return NonRecordingSpan(trace.get_current_span(context).get_span_context())
        return self._tracer.start_span(name, context, *args, **kwargs)

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self, name: str, context: Any = None, *args: Any, **kwargs: Any
    ) -> Iterator[trace.Span]:
        if is_quiet():
            span = self.start_span(name, context)
            with trace.use_span(span):
                yield span
            return
        with self._tracer.start_as_current_span(name, context, *args, **kwargs) as span:
            yield span


class _QuietCounter(Counter):
    def __init__(self, counter: Counter) -> None:  # a wrapper: no instrument of its own
        self._counter = counter

    def add(self, amount: int | float, attributes: Any = None, context: Any = None) -> None:
        if not is_quiet():
            self._counter.add(amount, attributes, context)


class _QuietHistogram(Histogram):
    def __init__(self, histogram: Histogram) -> None:
        self._histogram = histogram

    def record(self, amount: int | float, attributes: Any = None, context: Any = None) -> None:
        if not is_quiet():
            self._histogram.record(amount, attributes, context)


def quiet_instruments(instruments: object) -> None:
    """Make every counter and histogram attribute of ``instruments`` record nothing while
    :func:`is_quiet`."""
    for name, value in list(vars(instruments).items()):
        if isinstance(value, Counter):
            setattr(instruments, name, _QuietCounter(value))
        elif isinstance(value, Histogram):
            setattr(instruments, name, _QuietHistogram(value))
