"""Events yielded by ``agent.stream()``, in the order things happen.

Model deltas (``TextDelta``, ``ReasoningDelta``, ``ToolCallDelta``) come straight
from the model; the others mark loop steps. The last event of a run that did not
fail is ``FinalResult``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from tether.messages import Message, ToolCall, ToolResult, Usage

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.models.base import ModelResponse
    from tether.result import Result

ModelStopReason: TypeAlias = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filter"
]


@dataclass(slots=True)
class TextDelta:
    """A fragment of the model's visible text."""

    text: str


@dataclass(slots=True)
class ReasoningDelta:
    """A fragment of the model's reasoning (never part of ``Result.text``)."""

    text: str
    signature: str | None = None
    redacted: bool = False


@dataclass(slots=True)
class ToolCallDelta:
    """A fragment of tool call number ``index`` of the response.

    ``arguments`` is a JSON text fragment to append, or a complete dict when the
    provider delivers parsed arguments. ``id`` and ``name`` arrive at least once.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str | dict[str, Any] = ""


@dataclass(slots=True)
class ModelStop:
    """The model finished its response; every model stream must end with one."""

    stop_reason: ModelStopReason
    usage: Usage = field(default_factory=Usage)


@dataclass(slots=True)
class ModelRetry:
    """Model call attempt ``attempt`` failed with ``reason``; the next starts after ``delay`` s."""

    attempt: int
    reason: str
    delay: float
    provider: str
    error: str = ""


@dataclass(slots=True)
class ModelFallback:
    """A ``FallbackChain`` moved from ``from_model`` to ``to_model`` because of ``reason``."""

    from_model: str
    to_model: str
    reason: str
    error: str = ""


ModelStreamEvent: TypeAlias = (
    TextDelta | ReasoningDelta | ToolCallDelta | ModelStop | ModelRetry | ModelFallback
)


@dataclass(slots=True)
class ModelCallStarted:
    """A model call (attempt number ``attempt``, from 1) begins."""

    attempt: int


@dataclass(slots=True)
class ModelCallFinished:
    """A model call produced ``response``."""

    response: ModelResponse


@dataclass(slots=True)
class ToolStarted:
    """A tool call starts running."""

    tool_call: ToolCall


@dataclass(slots=True)
class ToolFinished:
    """A tool call ended with ``result`` (also denied, cancelled or failed calls)."""

    tool_call: ToolCall
    result: ToolResult


@dataclass(slots=True)
class ToolProgress:
    """A running tool call reported progress (``ctx.progress(...)``, an MCP server's
    ``notifications/progress``).

    ``tool`` and ``call_id`` name the call; ``agent_path`` is the path of the agent
    running it (``""`` at the top, see ``Agent.path``); ``progress`` and ``total`` are
    the tool's own numbers (``total`` None: unknown); ``message`` is its text. It is
    yielded live, between the call's ``ToolStarted`` and ``ToolFinished``, never after.
    """

    tool: str
    call_id: str
    agent_path: str
    progress: float
    total: float | None = None
    message: str | None = None


@dataclass(slots=True)
class MessageCompleted:
    """A message joined the conversation."""

    message: Message


@dataclass(slots=True)
class ContextCompressed:
    """The model's view of the conversation was compressed (the transcript keeps everything).

    ``reason``: ``preflight``, ``threshold`` or ``overflow``; the view is now
    ``messages[:start] + [summary] + messages[end:]`` (``summary`` is a summary or
    an omission marker, None if nothing stands in); token counts are estimates.
    """

    reason: str
    start: int
    end: int
    summary: Message | None
    tokens_before: int
    tokens_after: int


@dataclass(slots=True)
class ReplyTruncated:
    """The model's reply hit its output token limit; the loop asks again.

    ``action``: ``continue`` (a text reply: the model is asked to go on, and the parts
    are stitched into ``Result.message``) or ``retry`` (cut inside a tool call's
    arguments: the reply is dropped and the call retried with ``max_tokens``).
    """

    action: str
    attempt: int
    max_tokens: int | None = None


@dataclass(slots=True)
class InterruptRaised:
    """The run is suspending to ask ``interrupt`` (answer it with ``agent.resume``)."""

    interrupt: Interrupt


@dataclass(slots=True)
class Steered:
    """Guidance from ``agent.steer(text)`` joined the conversation (as a user message)."""

    text: str


@dataclass(slots=True)
class SubAgentEvent:
    """A stream event of a sub-agent, forwarded to its parent's stream.

    ``path`` is the sub-agent's place below the streaming agent (``researcher#c1``,
    ``researcher#c1/coder#c4``). Forwarded events join the parent's stream live, as the
    sub-agent yields them, after its call's ``ToolStarted`` and before its ``ToolFinished``.
    """

    path: str
    event: StreamEvent


@dataclass(slots=True)
class FinalResult:
    """The run is over; ``result`` is what ``invoke`` returns."""

    result: Result


StreamEvent: TypeAlias = (
    TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ModelRetry
    | ModelFallback
    | ModelCallStarted
    | ModelCallFinished
    | ToolStarted
    | ToolFinished
    | ToolProgress
    | MessageCompleted
    | ContextCompressed
    | ReplyTruncated
    | InterruptRaised
    | Steered
    | SubAgentEvent
    | FinalResult
)

StreamObserver: TypeAlias = Callable[[StreamEvent], None]
"""Sees each stream event of a run as the agent yields it (``Agent.observers``)."""
