"""The open spans of one traced invocation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span

    from tether.durable.approval_types import Redactor
    from tether.messages import ToolCall
    from tether.session import SessionJournal
    from tether.tools import Tool


@dataclass(slots=True)
class ToolSpan:
    span: Span
    call: ToolCall
    tool: Tool | None
    started: float
    confirming: list[str] = field(default_factory=list)
    """Interventions that returned Confirm for this call (their answer shows at the end)."""


@dataclass(slots=True)
class RunSpans:
    """The open spans of one invocation."""

    span: Span
    context: Context
    journal: SessionJournal | None
    model: str
    provider: str
    redactor: Redactor | None
    resumed: bool
    chat: Span | None = None
    chat_started: float = 0.0
    chat_model: str = ""
    attempt: int = 0
    tools: dict[str, ToolSpan] = field(default_factory=dict)
    last_seen: int = 0
    """time_ns() of the last stream event (the end of a run its caller abandoned)."""


def end_abandoned(run: RunSpans) -> None:
    """End the spans of a run whose caller stopped reading its stream (no AfterInvocation
    fires then), at the time of its last event."""
    end = run.last_seen or None
    for span in [run.chat, *(t.span for t in run.tools.values())]:
        if span is not None:
            span.set_attribute("tether.abandoned", True)
            span.end(end_time=end)
    run.span.set_attributes({"tether.stop_reason": "cancelled", "tether.abandoned": True})
    run.span.end(end_time=end)
