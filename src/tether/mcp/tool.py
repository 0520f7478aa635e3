"""MCPTool: one tool of an MCP server as an ordinary tether Tool."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.mcp.validation import schema_validator
from tether.tools.base import Tool

if TYPE_CHECKING:
    from concurrent.futures import Executor

    import mcp_types

    from tether.tools.context import ToolContext
    from tether.tools.media import ToolOutput

_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
CONTEXT_KEY = "__tether_context__"
"""The keyword that carries the ToolContext to the call (servers with elicitation on)."""


@dataclass(frozen=True, slots=True)
class ToolHints:
    """How tether treats a tool: from the server's annotations, then the user's overrides.

    ``read_only`` (``readOnlyHint``): may run in parallel with other read-only calls;
    ``idempotent`` (``idempotentHint``, or read-only): crash recovery may re-run it;
    ``destructive`` (``destructiveHint``, MCP default true for tools that write) and
    ``open_world`` (``openWorldHint``, MCP default true) are for hooks and interventions;
    ``timeout``: seconds before a call fails (None: the server's ``call_timeout``).
    """

    read_only: bool = False
    idempotent: bool = False
    destructive: bool = True
    open_world: bool = True
    interactive: bool = False
    timeout: float | None = None

    @classmethod
    def from_annotations(cls, annotations: mcp_types.ToolAnnotations | None) -> ToolHints:
        """Apply MCP's defaults to a server's (untrusted) annotations."""
        if annotations is None:
            return cls()
        read_only = annotations.read_only_hint is True
        return cls(
            read_only=read_only,
            idempotent=read_only or annotations.idempotent_hint is True,
            destructive=not read_only and annotations.destructive_hint is not False,
            open_world=annotations.open_world_hint is not False,
        )

    def override(self, tool: str, values: Mapping[str, Any]) -> ToolHints:
        """These hints with the user's ``values`` (checked: names and types)."""
        known = {f.name for f in fields(self)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigurationError(
                f"hints for MCP tool {tool!r} name unknown keys {unknown}; "
                f"the keys are: {', '.join(sorted(known))}"
            )
        for key, value in values.items():
            ok = (
                (value is None or (isinstance(value, int | float) and value > 0))
                if key == "timeout"
                else isinstance(value, bool)
            )
            if not ok:
                want = (
                    "a positive number of seconds or None" if key == "timeout" else "True or False"
                )
                raise ConfigurationError(
                    f"hints for MCP tool {tool!r}: {key} must be {want}, got {value!r}"
                )
        return replace(self, **values)


class MCPTool(Tool):
    """A tool offered by an MCP server; calling it calls the server.

    Beyond a Tool's attributes: ``server`` (the server's label), ``mcp_name`` (the
    tool's name on the server, before any prefix), ``destructive`` and ``open_world``
    (from :class:`ToolHints`), ``annotations`` (what the server sent, untrusted) and
    ``gone`` (the server stopped offering it).
    """

    server: str
    mcp_name: str
    destructive: bool
    open_world: bool
    annotations: dict[str, Any]
    gone: bool

    def __init__(
        self,
        definition: mcp_types.Tool,
        *,
        name: str,
        server: str,
        hints: ToolHints,
        call_timeout: float | None,
        call: Callable[[MCPTool, dict[str, Any]], Awaitable[str | ToolOutput]],
        wants_context: bool = False,
    ) -> None:
        async def run(**arguments: Any) -> str | ToolOutput:
            return await call(self, arguments)

        run.__name__ = name
        self.server = server
        self.mcp_name = definition.name
        self.gone = False
        self._wants_context = wants_context
        self._apply(definition, name, hints, call_timeout, run)

    def update(
        self, definition: mcp_types.Tool, hints: ToolHints, call_timeout: float | None
    ) -> None:
        """Take the server's new definition (after ``tools/list_changed``) in place.

        The spec dict keeps its identity, so an agent that holds it sees the change.
        """
        spec = self._spec
        self._apply(definition, self.name, hints, call_timeout, self.fn)
        spec.clear()
        spec.update(self._spec)
        self._spec = spec
        self.gone = False

    def _apply(
        self,
        definition: mcp_types.Tool,
        name: str,
        hints: ToolHints,
        call_timeout: float | None,
        fn: Callable[..., Any],
    ) -> None:
        schema = dict(definition.input_schema)
        validate = schema_validator(schema, server=self.server, tool=definition.name)
        description = definition.description or (
            definition.annotations.title if definition.annotations is not None else None
        )
        self._setup(
            fn,
            name,
            description or f"Tool {definition.name!r} of MCP server {self.server!r}.",
            schema,
            validate,
            CONTEXT_KEY if self._wants_context else None,
            read_only=hints.read_only,
            path_params=(),
            interactive=hints.interactive,
            idempotent=hints.idempotent,
            reconcile=None,
            timeout=hints.timeout if hints.timeout is not None else call_timeout,
        )
        self.destructive = hints.destructive
        self.open_world = hints.open_world
        self.annotations = (
            definition.annotations.model_dump(by_alias=True, exclude_none=True)
            if definition.annotations is not None
            else {}
        )

    async def invoke(
        self,
        kwargs: dict[str, Any],
        context: ToolContext | None = None,
        executor: Executor | None = None,
    ) -> Any:
        """Call the server's tool. The agent's loop passes the ToolContext (for progress
        events and elicitation); a direct call without one works too, and streams nothing."""
        if context is not None:
            return await super().invoke(kwargs, context, executor)
        if self.timeout is None:
            return await self.fn(**kwargs)
        async with asyncio.timeout(self.timeout):
            return await self.fn(**kwargs)

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r}, server={self.server!r})"


def local_name(mcp_name: str, prefix: str) -> str:
    """The tether name of a server's tool: prefix + name, characters providers refuse as '_'."""
    return (prefix + _INVALID_CHARS.sub("_", mcp_name))[:64]
