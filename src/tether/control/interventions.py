"""Interventions: policy handlers that return actions at the loop's decision points.

A handler overrides only the points it cares about (``before_invocation``,
``before_model_call``, ``after_model_call``, ``before_tool_call``,
``after_tool_call``, ``before_output``, ``before_context_compression``) and returns an action: ``Proceed`` (or None), ``Deny``,
``Guide``, ``Confirm`` or ``Transform``. Handlers run in the order given; the
first Deny (or refused Confirm) ends the evaluation; Guides from several
handlers become one message naming each handler; a Transform applies at once,
so later handlers see its output. They run as hooks at
``HookOrder.INTERVENTION_INPUT`` (before_*) and ``INTERVENTION_OUTPUT`` (after_*).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from tether.control.events import (
    AfterModelCall,
    AfterToolCall,
    BeforeContextCompression,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
    HookEvent,
    PolicyVerdict,
)
from tether.control.interrupts import ConfirmDecision, InterruptSignal
from tether.control.registry import HookOrder, HookRegistry
from tether.errors import ConfigurationError, HookError
from tether.messages import Message, TextBlock, ToolCall, ToolResult
from tether.models.base import ModelResponse

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef

_log = logging.getLogger("tether")


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


_POINTS: dict[Point, tuple[type[HookEvent], int]] = {
    "before_invocation": (BeforeInvocation, HookOrder.INTERVENTION_INPUT),
    "before_model_call": (BeforeModelCall, HookOrder.INTERVENTION_INPUT),
    "after_model_call": (AfterModelCall, HookOrder.INTERVENTION_OUTPUT),
    "before_tool_call": (BeforeToolCall, HookOrder.INTERVENTION_INPUT),
    "after_tool_call": (AfterToolCall, HookOrder.INTERVENTION_OUTPUT),
    "before_output": (BeforeOutput, HookOrder.INTERVENTION_OUTPUT),
    "before_context_compression": (BeforeContextCompression, HookOrder.INTERVENTION_INPUT),
}


class InterventionRunner:
    """A HookProvider that evaluates a list of handlers at each point one of them overrides."""

    def __init__(self, handlers: Sequence[InterventionHandler]) -> None:
        for handler in handlers:
            if not isinstance(handler, InterventionHandler):
                raise ConfigurationError(
                    f"interventions=[...] takes InterventionHandler instances, got {handler!r}"
                )
            if handler.on_error not in ("throw", "deny", "proceed"):
                raise ConfigurationError(
                    f"intervention {handler.label!r}: on_error must be 'throw', 'deny' or "
                    f"'proceed', got {handler.on_error!r}"
                )
        self.handlers = list(handlers)

    def register_hooks(self, registry: HookRegistry) -> None:
        for point, (event_type, order) in _POINTS.items():
            active = [h for h in self.handlers if _overrides(h, point)]
            if active:
                registry.add(event_type, _PointEvaluator(point, active), order)


def _overrides(handler: InterventionHandler, point: Point) -> bool:
    return getattr(type(handler), point) is not getattr(InterventionHandler, point)


class _PointEvaluator:
    def __init__(self, point: Point, handlers: list[InterventionHandler]) -> None:
        self.point = point
        self.handlers = handlers
        self.__qualname__ = f"interventions.{point}"

    async def __call__(self, event: Any) -> None:
        if self.point == "after_model_call" and event.response is None:
            return  # the call failed: nothing to judge
        guides: list[tuple[str, str]] = []
        asked: list[InterruptSignal] = []  # Confirms waiting for a human: asked together
        for handler in self.handlers:
            action = await self._ask(handler, event)
            if action is None or isinstance(action, Proceed):
                continue
            hooks = event.agent.runtime.hooks
            if hooks.has(PolicyVerdict):  # the audit trail, tracing
                verdict = PolicyVerdict(
                    event.agent, self.point, handler.label, type(action).__name__, event
                )
                await hooks.emit(verdict)
            if isinstance(action, Deny):
                _deny(self.point, event, f"denied by policy {handler.label!r}: {action.reason}")
                return
            if isinstance(action, Confirm):
                try:
                    refusal = await _confirm(self.point, event, handler, action.prompt)
                except InterruptSignal as signal:
                    _refuse_twice(self.point, asked, signal, handler)
                    asked.append(signal)
                    continue
                if refusal is not None:
                    _deny(self.point, event, refusal)
                    return
            elif isinstance(action, Guide):
                guides.append((handler.label, action.feedback))
            elif isinstance(action, Transform):
                try:
                    _transform(self.point, event, action.fn, handler.label)
                except HookError:
                    raise
                except Exception as exc:  # the handler's own code: its on_error applies
                    fallback = self._failed(handler, exc)
                    if fallback is None:
                        await _failed_open(self.point, handler, event, exc)
                    else:
                        reason = f"denied by policy {handler.label!r}: {fallback.reason}"
                        _deny(self.point, event, reason)
                        return
            else:
                raise HookError(
                    f"intervention {handler.label!r} returned {action!r} at {self.point}; expected "
                    "Proceed, Deny, Guide, Confirm, Transform or None"
                )
        if asked:  # a later Deny returned above: nobody is asked about a denied call
            raise InterruptSignal.joined(asked)
        if guides:
            _guide(self.point, event, _combine(guides))

    async def _ask(self, handler: InterventionHandler, event: Any) -> Action:
        try:
            action = getattr(handler, self.point)(event)
            if inspect.isawaitable(action):
                action = await action
            return action  # type: ignore[no-any-return]
        except Exception as exc:
            fallback = self._failed(handler, exc)
            if fallback is None:
                await _failed_open(self.point, handler, event, exc)
            return fallback

    def _failed(self, handler: InterventionHandler, exc: Exception) -> Deny | None:
        """Apply ``handler.on_error`` to ``exc``: None (proceed), a Deny, or raise HookError."""
        if handler.on_error == "proceed":
            return None
        if handler.on_error == "deny":
            return Deny(f"the policy failed ({type(exc).__name__}: {exc}) and fails closed")
        raise HookError(
            f"intervention {handler.label!r} raised {type(exc).__name__} at {self.point}: {exc}"
        ) from exc


def _refuse_twice(
    point: Point,
    asked: list[InterruptSignal],
    signal: InterruptSignal,
    handler: InterventionHandler,
) -> None:
    """Two handlers of one name asking at one point would share an interrupt id (one
    answer would answer both): refuse it, as the hook registry does for hooks."""
    ids = {i.id for s in asked for i in s.interrupts}
    if signal.interrupt.id in ids:
        raise HookError(
            f"two interventions named {handler.label!r} both asked for confirmation at "
            f"{point}: one answer would answer both; give each its own name "
            "(InterventionHandler.name)"
        )


async def _failed_open(
    point: Point, handler: InterventionHandler, event: Any, exc: Exception
) -> None:
    """``on_error="proceed"``: the step goes on, but never without a trace: a warning and a
    ``policy.failed`` verdict (the exception type, no message) for the audit trail and tracing."""
    _log.warning(
        "intervention %r raised %s at %s and fails open (on_error='proceed')",
        handler.label,
        type(exc).__name__,
        point,
    )
    hooks = event.agent.runtime.hooks
    if hooks.has(PolicyVerdict):
        failed = PolicyVerdict(
            event.agent, point, handler.label, "policy.failed", event, type(exc).__name__
        )
        await hooks.emit(failed)


def _combine(guides: list[tuple[str, str]]) -> str:
    if len(guides) == 1:
        name, text = guides[0]
        return f"Guidance from policy {name!r}: {text}"
    lines = "\n".join(f"- {name}: {text}" for name, text in guides)
    return f"Guidance from {len(guides)} policies:\n{lines}"


def _deny(point: Point, event: Any, reason: str) -> None:
    if point == "before_tool_call":
        event.cancel_tool = reason
    elif point == "after_tool_call":
        old: ToolResult = event.result
        event.result = ToolResult(
            old.tool_call_id, old.name, f"Denied: {reason}", is_error=True, status="denied"
        )
    else:
        event.block = reason


def _guide(point: Point, event: Any, text: str) -> None:
    if point == "before_tool_call":
        event.cancel_tool = f"not run. {text}"
    elif point == "after_tool_call":
        old: ToolResult = event.result
        event.result = ToolResult(
            old.tool_call_id, old.name, f"{old.content}\n\n{text}", old.is_error, old.status
        )
    elif point == "after_model_call":
        event.retry = True
        event.guidance = text
    elif point == "before_output":  # nobody to guide: the answer is final
        event.block = f"not released. {text}"
    elif point == "before_context_compression":
        raise HookError(
            f"Guide is not an action at {point} (no model turn to guide): {text!r}; "
            "return Deny to keep the view or Transform to replace the summary"
        )
    else:
        event.messages = [*event.messages, Message("user", [TextBlock(text)])]


def _transform(point: Point, event: Any, fn: Callable[[Any], Any], label: str) -> None:
    if point in ("before_invocation", "before_model_call"):
        event.messages = _checked(fn(list(event.messages)), list, label, point)
    elif point == "after_model_call":
        old: ModelResponse = event.response
        message = _checked(fn(old.message), Message, label, point)
        event.response = ModelResponse(message, old.stop_reason, old.usage, old.argument_errors)
    elif point == "before_tool_call":
        event.tool_call = _checked(fn(event.tool_call), ToolCall, label, point)
        event.mark_transformed(label)
    elif point == "before_output":
        event.message = _checked(fn(event.message), Message, label, point)
    elif point == "before_context_compression":
        summary = fn(event.summary)
        event.summary = None if summary is None else _checked(summary, Message, label, point)
    else:
        event.result = _checked(fn(event.result), ToolResult, label, point)


def _checked(value: Any, expected: type, label: str, point: Point) -> Any:
    if not isinstance(value, expected):
        raise HookError(
            f"intervention {label!r}: Transform at {point} returned {type(value).__name__}, "
            f"expected {expected.__name__}"
        )
    return value


async def _confirm(
    point: Point, event: Any, handler: InterventionHandler, prompt: str
) -> str | None:
    """None when confirmed, else the reason for the refusal.

    With ``Agent(confirm=...)`` the callback answers. Without one, a Confirm before
    a tool or model call suspends the run as an interrupt (answered with
    ``agent.resume``); at other points nobody can answer, so it fails closed.
    """
    agent: AgentRef = event.agent
    refused = f"not confirmed ({handler.label}: {prompt})"
    if agent.runtime.confirm is None:
        if point not in ("before_tool_call", "before_model_call"):
            return f"{refused}: no confirm callback is configured (Agent(confirm=...))"
        # The question records the call as it stands here, after every policy ahead of
        # this Confirm: what the approver sees (and edits) is what will run.
        answer = event.interrupter(
            f"confirm:{handler.label}",
            prompt,
            "intervention",
            tool_call=getattr(event, "tool_call", None),
        )
        decision = ConfirmDecision.parse(answer)
        if not decision.approved:
            return f"{refused}: {decision.reason or 'the approver said no'}"
        if decision.args is not None and point == "before_tool_call":
            call: ToolCall = event.tool_call
            event.tool_call = ToolCall(call.id, call.name, dict(decision.args))
        if point == "before_tool_call":
            event.mark_approved(event.tool_call)
        return None
    request = ConfirmRequest(prompt, handler.label, point, agent, getattr(event, "tool_call", None))
    if inspect.iscoroutinefunction(agent.runtime.confirm):
        answer = await agent.runtime.confirm(request)
    else:
        answer = await asyncio.to_thread(agent.runtime.confirm, request)
        if inspect.isawaitable(answer):
            answer = await answer
    if answer is not True:
        return f"{refused}: the approver said no"
    if point == "before_tool_call":
        event.mark_approved(event.tool_call)
    return None


async def recheck_edit(agent: AgentRef, confirm_name: str, event: BeforeToolCall) -> None:
    """The edit rule: the policies ahead of the Confirm ``confirm_name`` judge the edited
    call in ``event`` again; a Deny, a Guide or a Transform that changes it refuses the
    edit (AnswerError naming the policy and the fields), since what a human approves must
    be exactly what runs. Confirms ahead were answered already; they do not re-ask."""
    from tether.errors import AnswerError

    label = confirm_name.removeprefix("confirm:")
    ahead: list[InterventionHandler] = []
    for handler in agent.runtime.interventions:
        if handler.label == label:
            break
        if _overrides(handler, "before_tool_call"):
            ahead.append(handler)
    call: ToolCall = event.tool_call
    for handler in ahead:
        try:
            action = handler.before_tool_call(event)
            if inspect.isawaitable(action):
                action = await action
            rewritten = action.fn(call) if isinstance(action, Transform) else call
        except Exception as exc:
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} failed on it "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        if isinstance(action, Deny | Guide):
            why = action.reason if isinstance(action, Deny) else action.feedback
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} would not let it run "
                f"({why}); edit it within the policy or deny the call"
            )
        if not isinstance(rewritten, ToolCall):
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r}'s Transform returned "
                f"{type(rewritten).__name__}, not a ToolCall"
            )
        changed = _changed_fields(call, rewritten)
        if changed:
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} would rewrite "
                f"{', '.join(changed)} after your approval, so what you approved would not be "
                "what runs; edit within the policy (leave those fields as shown) or deny"
            )


def _changed_fields(before: ToolCall, after: ToolCall) -> list[str]:
    """What a Transform changed: the tool's name, and each argument it set or dropped."""
    out = [] if after.name == before.name else [f"the tool ({before.name!r} -> {after.name!r})"]
    for key in sorted(set(before.arguments) | set(after.arguments)):
        was, now = before.arguments.get(key, _ABSENT), after.arguments.get(key, _ABSENT)
        if (was is _ABSENT) != (now is _ABSENT) or _json(was) != _json(now):
            out.append(f"field {key!r}")
    return out


_ABSENT: Any = object()


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, default=repr)
