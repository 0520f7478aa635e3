"""The open spans of one traced invocation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span

    from tether.governance.masks import Masker
    from tether.messages import ToolCall
    from tether.observe.workflow import Conducting
    from tether.session import SessionJournal
    from tether.tools.base import Tool


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
    masker: Masker
    """Every text this run's spans carry goes through it (shared with the agent tree)."""
    resumed: bool
    chat: Span | None = None
    chat_started: float = 0.0
    chat_model: str = ""
    attempt: int = 0
    tools: dict[str, ToolSpan] = field(default_factory=dict)
    last_seen: int = 0
    """time_ns() of the last stream event (the end of a run its caller abandoned)."""
    conducting: Conducting | None = None
    """A workflow's session: its model decides node runs (no chat spans, node attributes)."""


_OPEN_TOOLS: dict[tuple[int, str], Span] = {}
"""The open ``execute_tool`` spans of every traced agent, by (id of the agent, call id): a
sub-agent's invocation starts under the span of the parent's call that runs it."""


def tool_opened(agent: object, call_id: str, span: Span) -> None:
    _OPEN_TOOLS[(id(agent), call_id)] = span


def tool_closed(agent: object, call_id: str) -> None:
    _OPEN_TOOLS.pop((id(agent), call_id), None)


def open_tool(agent: object, call_id: str) -> Span | None:
    """The open span of ``agent``'s tool call ``call_id`` (None: not traced, or ended)."""
    return _OPEN_TOOLS.get((id(agent), call_id))


def end_abandoned(run: RunSpans, agent: object) -> None:
    """End the spans of a run whose caller stopped reading its stream (no AfterInvocation
    fires then), at the time of its last event."""
    end = run.last_seen or None
    for call_id in run.tools:
        tool_closed(agent, call_id)
    for span in [run.chat, *(t.span for t in run.tools.values())]:
        if span is not None:
            span.set_attribute("tether.abandoned", True)
            span.end(end_time=end)
    run.span.set_attributes({"tether.stop_reason": "cancelled", "tether.abandoned": True})
    run.span.end(end_time=end)
