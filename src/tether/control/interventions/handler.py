"""What a policy author writes: the InterventionHandler base, its actions, and the
request a ``confirm`` callback is asked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.events import (
        AfterModelCall,
        AfterToolCall,
        BeforeContextCompression,
        BeforeInvocation,
        BeforeModelCall,
        BeforeOutput,
        BeforeToolCall,
    )
    from tether.messages import ToolCall


@dataclass(frozen=True, slots=True)
class Proceed:
    """Let the step continue unchanged."""


@dataclass(frozen=True, slots=True)
class Deny:
    """Refuse the step: a tool call is not run (or its result is discarded); elsewhere
    the invocation stops with stop reason ``blocked``."""

    reason: str


@dataclass(frozen=True, slots=True)
class Guide:
    """Give the model feedback: after a model call the reply is discarded and the model
    retries with it; before a tool call the tool is not run and the model gets it instead."""

    feedback: str


@dataclass(frozen=True, slots=True)
class Confirm:
    """Ask a human (the AgentRef's ``confirm`` callback); a refusal acts as Deny."""

    prompt: str


@dataclass(frozen=True, slots=True)
class Transform:
    """Rewrite the subject of the point with ``fn``: the input messages, the request
    messages, the reply message, the tool call, the tool result or a compression's
    summary (a Message, or None for no stand-in)."""

    fn: Callable[[Any], Any]


Action: TypeAlias = Proceed | Deny | Guide | Confirm | Transform | None
OnError: TypeAlias = Literal["throw", "deny", "proceed"]
Point: TypeAlias = Literal[
    "before_invocation",
    "before_model_call",
    "after_model_call",
    "before_tool_call",
    "after_tool_call",
    "before_output",
    "before_context_compression",
]


@dataclass(frozen=True, slots=True)
class ConfirmRequest:
    """What the ``confirm`` callback is asked to approve."""

    prompt: str
    handler: str
    point: Point
    agent: AgentRef
    tool_call: ToolCall | None = None


ConfirmCallback: TypeAlias = Callable[[ConfirmRequest], bool | Awaitable[bool]]


class InterventionHandler:
    """Base class of policy handlers; override only the points you need.

    ``on_error`` says what happens when a method raises: ``"throw"`` (default: the
    run ends with stop reason ``error``), ``"deny"`` (fail closed) or ``"proceed"``.
    Methods may be sync or async.
    """

    name: str = ""
    on_error: OnError = "throw"

    def before_invocation(self, event: BeforeInvocation) -> Action | Awaitable[Action]:
        return None

    def before_model_call(self, event: BeforeModelCall) -> Action | Awaitable[Action]:
        return None

    def after_model_call(self, event: AfterModelCall) -> Action | Awaitable[Action]:
        return None

    def before_tool_call(self, event: BeforeToolCall) -> Action | Awaitable[Action]:
        return None

    def after_tool_call(self, event: AfterToolCall) -> Action | Awaitable[Action]:
        return None

    def before_output(self, event: BeforeOutput) -> Action | Awaitable[Action]:
        return None

    def before_context_compression(
        self, event: BeforeContextCompression
    ) -> Action | Awaitable[Action]:
        """Deny keeps the model's view as it is (an overflow then fails the run);
        Transform replaces the summary; Confirm asks the ``confirm`` callback."""
        return None

    @property
    def label(self) -> str:
        return self.name or type(self).__name__


def overrides(handler: InterventionHandler, point: Point) -> bool:
    """Whether ``handler`` overrides the method of ``point`` (only those points run it)."""
    return getattr(type(handler), point) is not getattr(InterventionHandler, point)
