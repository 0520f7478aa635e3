"""Tool: a function the model can call, with its schema, validator and run policy."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.messages import ToolCall
    from tether.tools.arguments import Validates

from tether.errors import ConfigurationError
from tether.tools.context import ToolContext
from tether.tools.threads import ToolThreads

# The name rule shared by the OpenAI, Anthropic and Bedrock tool APIs.
_VALID_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class Tool:
    """A function the agent can call.

    The schema and validator are built once, here; :meth:`prepare` and
    :meth:`invoke` are the cheap per-call path. Calling the Tool object calls
    the original function.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    path_params: tuple[str, ...]
    interactive: bool
    idempotent: bool
    reconcile: Callable[[ToolCall], Any] | None
    timeout: float | None
    cheap: bool = False
    """A model turn calling only cheap tools gives its iteration back to a refunding budget."""
    untrusted_schema: bool = False
    """Its schema came from outside (an MCP server): the loop validates a call's arguments
    in a worker thread, so a costly schema (a backtracking ``pattern``) never runs on the
    event loop."""
    is_async: bool
    takes_context: bool
    """It declares a ToolContext parameter (so it may emit stream events while it runs)."""
    fn: Callable[..., Any]
    __wrapped__: Callable[..., Any]

    def __init__(
        self,
        fn: Callable[..., Any],
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
    ) -> None:
        from tether.tools.schema import build_function_schema

        if inspect.isasyncgenfunction(fn) or inspect.isgeneratorfunction(fn):
            raise ConfigurationError(
                f"{_label(fn)} is a generator function; a tool must return its result "
                "(return a list or a string instead of yielding)"
            )
        if name is None:
            name = getattr(fn, "__name__", None)
            if not isinstance(name, str):
                raise ConfigurationError(f"{fn!r} has no __name__; pass name=... to tool()")
        if not _VALID_NAME.fullmatch(name):
            raise ConfigurationError(
                f"tool name {name!r} is not valid: use 1-64 letters, digits, '_' or '-' "
                "(pass name=... to tool())"
            )
        if timeout is not None and not timeout > 0:
            raise ConfigurationError(f"tool {name!r}: timeout must be a positive number of seconds")
        built = build_function_schema(fn, name, description)
        path_params = (path_params,) if isinstance(path_params, str) else tuple(path_params)
        for param in path_params:
            if param not in built.parameters:
                raise ConfigurationError(
                    f"tool {name!r}: path_params names {param!r}, which is not a parameter; "
                    f"parameters are: {', '.join(built.parameters) or '(none)'}"
                )
        self._setup(
            fn,
            name,
            built.description,
            built.input_schema,
            built.validator,
            built.context_param,
            read_only=read_only,
            path_params=path_params,
            interactive=interactive,
            idempotent=idempotent,
            reconcile=reconcile,
            timeout=timeout,
        )
        self.cheap = cheap

    def _setup(
        self,
        fn: Callable[..., Any],
        name: str,
        description: str,
        input_schema: dict[str, Any],
        validate: Validates,
        context_param: str | None,
        *,
        read_only: bool,
        path_params: tuple[str, ...],
        interactive: bool,
        idempotent: bool,
        reconcile: Callable[[ToolCall], Any] | None,
        timeout: float | None,
    ) -> None:
        """Set every attribute; subclasses whose schema does not come from ``fn`` call this."""
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.read_only = read_only
        self.path_params = path_params
        self.interactive = interactive
        self.idempotent = idempotent
        if reconcile is not None and not callable(reconcile):
            raise ConfigurationError(
                f"tool {self.name!r}: reconcile must be callable, got {reconcile!r}"
            )
        self.reconcile = reconcile
        self.timeout = timeout
        # The second test catches instances whose class defines `async def __call__`.
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )
        self.fn = fn
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)
        self._validate = validate
        self._context_param = context_param
        self.takes_context = context_param is not None
        self._spec: dict[str, Any] = {
            "name": name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def spec(self) -> dict[str, Any]:
        """The provider-neutral declaration ``{"name", "description", "input_schema"}``.

        Built once and shared: treat it as read-only.
        """
        return self._spec

    def prepare(self, arguments: dict[str, Any] | str) -> dict[str, Any]:
        """Validate and coerce the model's arguments (a dict or a JSON object string).

        Returns keyword arguments for :meth:`invoke`; raises ToolArgumentError with
        a message for the model when they do not fit the schema.
        """
        return self._validate(arguments, self.name)

    def check_edit(self, arguments: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
        """Validate ``edited`` values (a person's edit) merged over ``arguments``.

        The merged call must pass :meth:`prepare`, and every edited value must already
        have its parameter's JSON type: nothing a person typed is coerced (``42`` for a
        ``str`` is refused, not run as ``"42"``). Returns the prepared keyword arguments.
        """
        from pydantic_core import to_jsonable_python

        prepared = self.prepare({**arguments, **edited})
        kept = to_jsonable_python({k: v for k, v in prepared.items() if k not in edited})
        self._validate.strict({**kept, **edited}, self.name)
        return prepared

    async def invoke(
        self,
        kwargs: dict[str, Any],
        context: ToolContext | None = None,
        executor: Executor | None = None,
    ) -> Any:
        """Run the tool with prepared ``kwargs``; exceptions from the tool propagate.

        Async functions run on the loop; sync ones in ``executor`` (None: the loop's
        default) with the caller's contextvars. Past ``timeout`` raises TimeoutError
        (a sync function's thread cannot be stopped; it should poll ``context.cancel``).
        """
        if self._context_param is not None:
            if context is None:
                raise ConfigurationError(
                    f"tool {self.name!r} declares a ToolContext parameter "
                    f"({self._context_param!r}) but invoke() got context=None"
                )
            kwargs = {**kwargs, self._context_param: context}
        if self.timeout is None:
            return await self._run(kwargs, executor)
        async with asyncio.timeout(self.timeout):
            return await self._run(kwargs, executor)

    async def _run(self, kwargs: dict[str, Any], executor: Executor | None) -> Any:
        if self.is_async:
            return await self.fn(**kwargs)
        call = functools.partial(contextvars.copy_context().run, self.fn, **kwargs)
        if isinstance(executor, ToolThreads):
            return await executor.start(asyncio.get_running_loop(), call)
        return await asyncio.get_running_loop().run_in_executor(executor, call)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


def _label(fn: Callable[..., Any]) -> str:
    return repr(getattr(fn, "__name__", fn))
