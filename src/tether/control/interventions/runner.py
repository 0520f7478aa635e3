"""The InterventionRunner: a HookProvider evaluating the handlers at each point, and the
evaluation (order, the first Deny, Guides combined, Confirms asked together, on_error)."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

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
from tether.control.interrupts import InterruptSignal
from tether.control.interventions.confirm import confirm
from tether.control.interventions.effects import deny, guide, transform
from tether.control.interventions.handler import (
    Action,
    Confirm,
    Deny,
    Guide,
    InterventionHandler,
    Point,
    Proceed,
    Transform,
    overrides,
)
from tether.control.registry import HookOrder, HookRegistry
from tether.errors import ConfigurationError, HookError

_log = logging.getLogger("tether")


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
            active = [h for h in self.handlers if overrides(h, point)]
            if active:
                registry.add(event_type, _PointEvaluator(point, active), order)


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
                deny(self.point, event, f"denied by policy {handler.label!r}: {action.reason}")
                return
            if isinstance(action, Confirm):
                try:
                    refusal = await confirm(self.point, event, handler, action.prompt)
                except InterruptSignal as signal:
                    _refuse_twice(self.point, asked, signal, handler)
                    asked.append(signal)
                    continue
                if refusal is not None:
                    deny(self.point, event, refusal)
                    return
            elif isinstance(action, Guide):
                guides.append((handler.label, action.feedback))
            elif isinstance(action, Transform):
                try:
                    transform(self.point, event, action.fn, handler.label)
                except HookError:
                    raise
                except Exception as exc:  # the handler's own code: its on_error applies
                    fallback = self._failed(handler, exc)
                    if fallback is None:
                        await _failed_open(self.point, handler, event, exc)
                    else:
                        reason = f"denied by policy {handler.label!r}: {fallback.reason}"
                        deny(self.point, event, reason)
                        return
            else:
                raise HookError(
                    f"intervention {handler.label!r} returned {action!r} at {self.point}; expected "
                    "Proceed, Deny, Guide, Confirm, Transform or None"
                )
        if asked:  # a later Deny returned above: nobody is asked about a denied call
            raise InterruptSignal.joined(asked)
        if guides:
            guide(self.point, event, _combine(guides))

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
