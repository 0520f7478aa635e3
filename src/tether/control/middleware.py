"""Middleware: an onion around the model call and around each tool call.

A middleware overrides any of three phases: ``input`` (rewrite the request),
``wrap`` (an async generator around the rest of the onion: it may yield extra
events, rewrite them, or short-circuit without calling ``call_next``) and
``output`` (rewrite the result). The last item a ``wrap`` yields is the result
(a ``ModelResponse`` or a ``ToolResult``). Middleware sees deep copies of the
messages, tool specs and tool arguments, so it can never corrupt the history.
Phases a middleware does not override add no layer; zero middleware adds none.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from tether.errors import MiddlewareError
from tether.events import ModelStreamEvent
from tether.messages import ToolCall, ToolResult
from tether.models.base import ModelRequest, ModelResponse

if TYPE_CHECKING:
    from tether.tools.base import Tool

ModelItem: TypeAlias = ModelStreamEvent | ModelResponse
ModelCallNext: TypeAlias = Callable[[ModelRequest], AsyncIterator[ModelItem]]


@dataclass(slots=True)
class ToolRequest:
    """A tool call on its way to the tool (``tool`` is None for an unknown name)."""

    call: ToolCall
    tool: Tool | None


ToolItem: TypeAlias = ToolResult | Any
ToolCallNext: TypeAlias = Callable[[ToolRequest], AsyncIterator[ToolItem]]


class ModelMiddleware:
    """Base class for model-call middleware; override only the phases you need."""

    async def input(self, request: ModelRequest) -> ModelRequest:
        return request

    async def wrap(
        self, request: ModelRequest, call_next: ModelCallNext
    ) -> AsyncGenerator[ModelItem, None]:
        async for item in call_next(request):
            yield item

    async def output(self, response: ModelResponse) -> ModelResponse:
        return response


class ToolMiddleware:
    """Base class for tool-call middleware; override only the phases you need."""

    async def input(self, request: ToolRequest) -> ToolRequest:
        return request

    async def wrap(
        self, request: ToolRequest, call_next: ToolCallNext
    ) -> AsyncGenerator[ToolItem, None]:
        async for item in call_next(request):
            yield item

    async def output(self, result: ToolResult) -> ToolResult:
        return result


class _Onion:
    """The composed phases of a middleware list, built once per agent."""

    def __init__(self, base: Any, middlewares: Sequence[Any], inner: Callable[..., Any]) -> None:
        self.inputs = [m.input for m in middlewares if type(m).input is not base.input]
        self.outputs = [
            m.output for m in reversed(middlewares) if type(m).output is not base.output
        ]
        call = inner
        for m in reversed(middlewares):
            if type(m).wrap is not base.wrap:
                call = _bind(m.wrap, call)
        self.call = call
        self.active = bool(middlewares)


def _bind(wrap: Callable[..., Any], call_next: Callable[..., Any]) -> Callable[..., Any]:
    def layer(request: Any) -> Any:
        return wrap(request, call_next)

    return layer


def _checked(value: Any, expected: type, phase: Callable[..., Any]) -> Any:
    """``value`` if it is an ``expected``, else MiddlewareError naming the phase (a missing return)."""
    if not isinstance(value, expected):
        name = getattr(phase, "__qualname__", repr(phase))
        raise MiddlewareError(
            f"middleware {name}() returned {type(value).__name__}, expected {expected.__name__}; "
            "an input/output phase must return the (possibly rewritten) value it was given"
        )
    return value


class ModelOnion(_Onion):
    """Model middleware composed around ``inner(request)``."""

    def __init__(self, middlewares: Sequence[ModelMiddleware], inner: ModelCallNext) -> None:
        super().__init__(ModelMiddleware, middlewares, inner)

    async def prepare(self, request: ModelRequest) -> ModelRequest:
        request = replace(  # every other field (limits, output schema) carried over
            request,
            messages=copy.deepcopy(request.messages),
            tool_specs=copy.deepcopy(request.tool_specs),
        )
        for phase in self.inputs:
            request = _checked(await phase(request), ModelRequest, phase)
        return request

    async def finish(self, response: ModelResponse) -> ModelResponse:
        for phase in self.outputs:
            response = _checked(await phase(response), ModelResponse, phase)
        return response


class ToolOnion(_Onion):
    """Tool middleware composed around ``inner(request)``."""

    def __init__(self, middlewares: Sequence[ToolMiddleware], inner: ToolCallNext) -> None:
        super().__init__(ToolMiddleware, middlewares, inner)

    async def prepare(self, request: ToolRequest) -> ToolRequest:
        request = ToolRequest(copy.deepcopy(request.call), request.tool)
        for phase in self.inputs:
            request = _checked(await phase(request), ToolRequest, phase)
        return request

    async def finish(self, result: ToolResult) -> ToolResult:
        for phase in self.outputs:
            result = _checked(await phase(result), ToolResult, phase)
        return result
