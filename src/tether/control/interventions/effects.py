"""What an action does to the event of its point: a Deny, a Guide or a Transform
written into the tool call, the result, the reply or the messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.control.interventions.handler import Point
from tether.errors import HookError
from tether.messages import Message, TextBlock, ToolCall, ToolResult
from tether.models.base import ModelResponse


def deny(point: Point, event: Any, reason: str) -> None:
    """Refuse the step: the call is not run, its result is denied, or the run is blocked."""
    if point == "before_tool_call":
        event.cancel_tool = reason
    elif point == "after_tool_call":
        old: ToolResult = event.result
        event.result = ToolResult(
            old.tool_call_id, old.name, f"Denied: {reason}", is_error=True, status="denied"
        )
    else:
        event.block = reason


def guide(point: Point, event: Any, text: str) -> None:
    """Give the model ``text`` where it can act on it (no guide before compression)."""
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


def transform(point: Point, event: Any, fn: Callable[[Any], Any], label: str) -> None:
    """Rewrite the point's subject with ``fn``, checking the type it returns."""
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
