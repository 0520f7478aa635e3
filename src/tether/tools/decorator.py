"""The ``@tool`` decorator and :func:`as_tool`, which turn functions into :class:`Tool` objects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, overload

from tether.errors import ConfigurationError
from tether.messages import ToolCall
from tether.tools.base import Tool


@overload
def tool(
    fn: Callable[..., Any],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    path_params: tuple[str, ...] | list[str] | str = (),
    interactive: bool = False,
    idempotent: bool = False,
    reconcile: Callable[[ToolCall], Any] | None = None,
    timeout: float | None = None,
    cheap: bool = False,
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    path_params: tuple[str, ...] | list[str] | str = (),
    interactive: bool = False,
    idempotent: bool = False,
    reconcile: Callable[[ToolCall], Any] | None = None,
    timeout: float | None = None,
    cheap: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    path_params: tuple[str, ...] | list[str] | str = (),
    interactive: bool = False,
    idempotent: bool = False,
    reconcile: Callable[[ToolCall], Any] | None = None,
    timeout: float | None = None,
    cheap: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a sync or async function a :class:`Tool`.

    Use as ``@tool``, ``@tool(...)`` or ``tool(fn, ...)``. ``read_only``: the tool
    changes nothing; ``path_params``: arguments that are filesystem paths it touches;
    ``interactive``: it talks to a human (never run in parallel); ``idempotent``:
    safe to re-run after a crash; ``reconcile``: called with the ToolCall after a crash
    left the call in doubt, returns its result if it happened or None if it did not;
    ``timeout``: seconds before the call fails; ``cheap``: a model turn that calls only
    cheap tools gives its iteration back to an ``IterationBudget(refund_cheap=True)``.
    """

    def wrap(func: Callable[..., Any]) -> Tool:
        return Tool(
            func,
            name=name,
            description=description,
            read_only=read_only,
            path_params=path_params,
            interactive=interactive,
            idempotent=idempotent,
            reconcile=reconcile,
            timeout=timeout,
            cheap=cheap,
        )

    return wrap if fn is None else wrap(fn)


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    """Return ``obj`` if it is a Tool, else wrap a function with the default options."""
    if isinstance(obj, Tool):
        return obj
    if not callable(obj) and callable(getattr(obj, "tools", None)):
        raise ConfigurationError(
            f"{obj!r:.80} offers several tools, not one: put it in an agent's tools list, "
            "Agent(tools=[source, ...]), or expand it with tether.tools.source.expand_tools([...])"
        )
    if isinstance(obj, type) or not callable(obj):
        kind = f"the class {obj.__name__}" if isinstance(obj, type) else type(obj).__name__
        raise ConfigurationError(
            f"a tool must be a function or a Tool made with @tool, got {kind} ({obj!r:.80})"
        )
    return Tool(obj)
