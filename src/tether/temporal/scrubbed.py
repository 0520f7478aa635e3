"""The interceptor's spans without failure text.

temporalio's ``TracingInterceptor`` puts ``"<type>: <message>"`` of a failed activity or
workflow in its span's status and records the exception (message and stack trace) as an
event. A provider's or a tool's error text may quote a secret, and it has not been through
tether's redaction (that needs the agent's redactor, which the interceptor does not
know), so these spans keep the exception's type only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status


class _Span(trace.Span):
    """A span whose status description and exception events carry no message (a Span:
    OpenTelemetry's context and propagators ignore anything else)."""

    def __init__(self, span: trace.Span) -> None:
        self._span = span

    def end(self, end_time: int | None = None) -> None:
        self._span.end(end_time)

    def get_span_context(self) -> trace.SpanContext:
        return self._span.get_span_context()

    def set_attributes(self, attributes: Any) -> None:
        self._span.set_attributes(attributes)

    def set_attribute(self, key: str, value: Any) -> None:
        self._span.set_attribute(key, value)

    def add_event(self, name: str, attributes: Any = None, timestamp: int | None = None) -> None:
        self._span.add_event(name, attributes, timestamp)

    def add_link(self, context: trace.SpanContext, attributes: Any = None) -> None:
        self._span.add_link(context, attributes)

    def update_name(self, name: str) -> None:
        self._span.update_name(name)

    def is_recording(self) -> bool:
        return self._span.is_recording()

    def set_status(self, status: Any, description: str | None = None) -> None:
        if isinstance(status, Status):
            text = status.description
            self._span.set_status(Status(status.status_code, _type_only(text)))
        else:
            self._span.set_status(status, _type_only(description))

    def record_exception(self, exception: BaseException, *args: Any, **kwargs: Any) -> None:
        self._span.add_event("exception", {"exception.type": type(exception).__name__})


def _type_only(text: str | None) -> str | None:
    """``"ApplicationError: the message"`` -> ``"ApplicationError"``."""
    return None if text is None else text.split(":", 1)[0]


class ScrubbedTracer(trace.Tracer):
    """``tracer`` whose spans name failures by type only."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def start_span(self, name: str, context: Any = None, *args: Any, **kwargs: Any) -> Any:
        return _Span(self._tracer.start_span(name, context, *args, **kwargs))

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self, name: str, context: Any = None, *args: Any, **kwargs: Any
    ) -> Iterator[Any]:
        kwargs["record_exception"] = False  # its event would carry the message
        with self._tracer.start_as_current_span(name, context, *args, **kwargs) as span:
            yield _Span(span)
