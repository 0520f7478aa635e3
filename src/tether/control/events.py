"""Hook events: typed dataclasses whose writable fields are a declared whitelist.

Writing any field not in an event's ``WRITABLE`` set raises ``AttributeError``
naming the field and the event. Reading is always allowed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, dataclass_transform

from tether.errors import ConfigurationError, ReadOnlyFieldError, SessionStateError
from tether.messages import JSONValue, Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.interrupts import Interrupter
    from tether.models.base import ModelResponse
    from tether.result import Result
    from tether.tools.base import Tool

E = TypeVar("E", bound="HookEvent")


def _guarded_setattr(self: HookEvent, name: str, value: Any) -> None:
    if name not in self.WRITABLE:
        cls = type(self).__name__
        allowed = ", ".join(sorted(self.WRITABLE)) or "none"
        raise ReadOnlyFieldError(f"{cls}.{name} is read-only (writable fields of {cls}: {allowed})")
    object.__setattr__(self, name, value)


def _guarded_delattr(self: HookEvent, name: str) -> None:
    raise ReadOnlyFieldError(f"{type(self).__name__}.{name} cannot be deleted")


@dataclass_transform()
def hook_event(cls: type[E]) -> type[E]:
    """Make ``cls`` a slotted dataclass whose only writable fields are ``cls.WRITABLE``."""
    # A frozen dataclass gets an __init__ that bypasses __setattr__; the guard
    # installed afterwards then lets the whitelisted fields through.
    made = dataclasses.dataclass(frozen=True, slots=True, eq=False)(cls)
    unknown = made.WRITABLE - {f.name for f in dataclasses.fields(made)}  # type: ignore[arg-type]
    if unknown:
        raise ConfigurationError(
            f"{made.__name__}.WRITABLE names unknown fields: {sorted(unknown)}"
        )
    made.__setattr__ = _guarded_setattr  # type: ignore[assignment]
    made.__delattr__ = _guarded_delattr  # type: ignore[assignment]
    return made


class HookEvent:
    """Base class of every hook event."""

    __slots__ = ()
    WRITABLE: ClassVar[frozenset[str]] = frozenset()
    REVERSE: ClassVar[bool] = False
    """After* events run their callbacks in reverse registration order within a priority."""


@hook_event
class AgentInitialized(HookEvent):
    """The agent was constructed (fires once, from ``Agent.__init__``)."""

    agent: AgentRef


@hook_event
class BeforeInvocation(HookEvent):
    """An invocation starts.

    Writable: ``messages`` (the new input messages) and ``block`` (a reason: the
    invocation ends with stop reason ``blocked`` before anything is added).
    """

    WRITABLE = frozenset({"messages", "block"})
    agent: AgentRef
    messages: list[Message]
    block: str | None = None


@hook_event
class AfterInvocation(HookEvent):
    """An invocation ended (also after errors); ``result`` is what the caller gets.

    Writable: ``resume`` (a prompt: start another invocation with it at once, in the
    same call, when this one ended without suspending or failing; bounded).
    """

    WRITABLE = frozenset({"resume"})
    REVERSE = True
    agent: AgentRef
    result: Result
    resume: str | Message | list[Message] | None = None


@hook_event
class AfterMessageAdded(HookEvent):
    """A message was appended to the conversation."""

    agent: AgentRef
    message: Message


@hook_event
class BeforeModelCall(HookEvent):
    """The model is about to be called.

    Writable: ``messages`` (assign a new list to change what this call sends; the
    conversation history is not changed), ``tool_choice`` (for this call only:
    ``"auto"``, ``"required"``, ``"none"`` or the name of an offered tool; None keeps
    the provider's default) and ``block`` (a reason: stop with ``blocked`` instead of
    calling the model).
    """

    WRITABLE = frozenset({"messages", "tool_choice", "block"})
    agent: AgentRef
    messages: list[Message]
    tool_specs: list[dict[str, Any]]
    attempt: int
    block: str | None = None
    interrupter: Interrupter | None = None
    tool_choice: str | None = None

    def interrupt(self, name: str, reason: JSONValue = None) -> JSONValue:
        """Suspend the run before this model call; returns the answer after ``agent.resume``."""
        return _raise(self, name, reason)


@hook_event
class BeforeContextCompression(HookEvent):
    """The model's view is about to be compressed: ``messages[start:end]`` of the
    transcript will be replaced by ``summary`` (``reason``: preflight, threshold or
    overflow).

    Writable: ``summary`` (a replacement Message, or None for no stand-in) and
    ``block`` (a reason: keep the view as it is, for the rest of the run unless the
    provider refuses the request; vetoed again then, the run fails with
    ContextOverflowError). Interventions decide here at ``before_context_compression``.
    """

    WRITABLE = frozenset({"summary", "block"})
    agent: AgentRef
    reason: str
    start: int
    end: int
    summary: Message | None
    block: str | None = None


@hook_event
class AfterModelCall(HookEvent):
    """The model call ended with ``response`` or ``exception``.

    Writable: ``response`` (replace the reply), ``retry`` (``True``: discard the
    outcome and call the model again, bounded by ``Execution(max_retries=...)``),
    ``guidance`` (text added to the conversation as a user message before the
    retry) and ``block`` (a reason: discard the reply and stop with ``blocked``).
    """

    WRITABLE = frozenset({"response", "retry", "guidance", "block"})
    REVERSE = True
    agent: AgentRef
    response: ModelResponse | None
    exception: BaseException | None
    attempt: int
    retry: bool = False
    guidance: str | None = None
    block: str | None = None


@hook_event
class BeforeToolCall(HookEvent):
    """A tool call is about to run.

    Writable: ``tool_call`` (rewrite the call), ``selected_tool`` (run another
    tool), ``cancel_tool`` (``True`` or a reason string: the tool does not
    run and the model gets an error result with that reason) and ``block`` (a
    reason: the tool does not run, and the run stops with ``blocked`` once the
    calls of its batch have settled).
    """

    WRITABLE = frozenset({"tool_call", "selected_tool", "cancel_tool", "block"})
    agent: AgentRef
    tool_call: ToolCall
    selected_tool: Tool | None
    cancel_tool: bool | str = False
    interrupter: Interrupter | None = None
    block: str | None = None
    approved: ToolCall | None = None
    """The call exactly as a human approved it (a Confirm), else None. Read-only: a
    later hook that changes the call or the tool makes the loop refuse to run it."""

    transformed: tuple[tuple[str, ToolCall], ...] = ()
    """Each policy ``Transform`` of this call: (its label, the call it made). Read-only."""

    def mark_approved(self, call: ToolCall) -> None:
        """Record that a human approved exactly ``call`` (what runs must be this call)."""
        object.__setattr__(self, "approved", call)

    def mark_transformed(self, label: str) -> None:
        """Record that the policy ``label`` rewrote the call into ``tool_call`` (the journal
        names it with the arguments that ran)."""
        object.__setattr__(self, "transformed", (*self.transformed, (label, self.tool_call)))

    def interrupt(self, name: str, reason: JSONValue = None) -> JSONValue:
        """Suspend the run before this tool call; returns the answer after ``agent.resume``.

        Other calls of the same batch still run; the interrupted one re-runs on resume.
        """
        return _raise(self, name, reason)


@hook_event
class AfterToolCall(HookEvent):
    """A tool call ended. Writable: ``result`` (what the model sees), ``retry`` and
    ``block`` (a reason: the model gets a denied result instead, and the run stops with
    ``blocked`` once the calls of its batch have settled)."""

    WRITABLE = frozenset({"result", "retry", "block"})
    REVERSE = True
    agent: AgentRef
    tool_call: ToolCall
    selected_tool: Tool | None
    result: ToolResult
    exception: BaseException | None = None
    retry: bool = False
    block: str | None = None


@hook_event
class BeforeOutput(HookEvent):
    """The final assistant message of a run is about to join the conversation.

    Fires before the message is appended, journaled or streamed (with buffered
    output). Writable: ``message`` (what the caller gets and the history keeps) and
    ``block`` (a reason: drop the answer and stop with ``blocked``). ``output`` is the
    validated structured output when the invocation has an ``output_type``.
    """

    WRITABLE = frozenset({"message", "block"})
    agent: AgentRef
    message: Message
    block: str | None = None
    output: Any = None


@hook_event
class PolicyVerdict(HookEvent):
    """An intervention handler decided something other than Proceed (observe only).

    ``point`` is where (``before_tool_call``, ...), ``policy`` the handler's name,
    ``action`` one of Deny, Guide, Confirm, Transform, and ``subject`` the hook event
    the verdict is about (its ``tool_call``, when there is one). The audit trail and
    tracing record verdicts from here. A handler that raised and fails open
    (``on_error="proceed"``) gives action ``policy.failed`` with ``error``, the
    exception's type name.
    """

    WRITABLE = frozenset()
    agent: AgentRef
    point: str
    policy: str
    action: str
    subject: HookEvent
    error: str | None = None


def _raise(event: BeforeModelCall | BeforeToolCall, name: str, reason: JSONValue) -> JSONValue:
    if event.interrupter is None:
        raise SessionStateError(
            f"{type(event).__name__}.interrupt() is only available during a run"
        )
    return event.interrupter(name, reason)


HOOK_EVENT_TYPES: tuple[type[HookEvent], ...] = (
    AgentInitialized,
    BeforeInvocation,
    AfterInvocation,
    AfterMessageAdded,
    BeforeModelCall,
    AfterModelCall,
    BeforeToolCall,
    AfterToolCall,
    BeforeOutput,
    PolicyVerdict,
)
