"""MCPServer: an MCP server whose tools a tether AgentRef can call, under its governance."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.mcp.connection import Connection, ProgressReport
from tether.mcp.elicitation import Elicitations, ask
from tether.mcp.errors import MCPToolError
from tether.mcp.results import result_text
from tether.mcp.sampling import SamplingAnswerer
from tether.mcp.tool import CONTEXT_KEY, MCPTool, ToolHints, local_name
from tether.mcp.transports import HTTPTransport, SSETransport, StdioTransport, Transport

if TYPE_CHECKING:
    import mcp_types

    from tether.agent_ref import AgentRef
    from tether.tools.base import Tool
    from tether.tools.context import ToolContext
    from tether.tools.media import ToolOutput

_PREFIX = re.compile(r"[A-Za-z0-9_-]*")


class MCPServer:
    """An MCP server as a source of tether tools.

    Build one with :meth:`stdio`, :meth:`http` or :meth:`sse` and pass it in ``Agent(tools=[...])``
    (``Agent(tools=[server, ...])``). :meth:`tools` connects on first use and
    returns one :class:`MCPTool` per server tool; the connection is shared by every
    call, restarted when the server goes away, and closed by :meth:`close` (or ``with``).

    Options: ``name`` (label in errors, logs and tool metadata), ``prefix`` (prepended to
    every tool name), ``allow`` / ``deny`` (server tool names to keep / leave out),
    ``hints`` (per server tool name, a dict overriding :class:`ToolHints` fields: the
    server's annotations are untrusted), ``trust_annotations`` (False: ignore them, every
    tool counts as a destructive, non-idempotent write unless ``hints`` say otherwise),
    ``startup_timeout`` / ``list_timeout`` / ``call_timeout`` (seconds),
    ``max_result_chars`` (a longer text is an error the model sees; images past it, by
    their base64 size, are left out and named), ``max_tools`` (a server listing more
    tools fails to connect, 500 by default) and ``roots``
    (directories, or ``file://`` URIs, the server may work in; None: the client offers
    no roots capability). ``sampling``: an AgentRef (without tools, not the one calling
    this server) that answers the server's ``sampling/createMessage`` requests under its
    own hooks and interventions; None (default): sampling is refused. ``elicitation``:
    True lets the server ask the user for input during a call (see
    :mod:`tether.mcp.elicitation`); False (default): it cannot ask.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        name: str | None = None,
        prefix: str = "",
        allow: Iterable[str] | None = None,
        deny: Iterable[str] = (),
        hints: Mapping[str, Mapping[str, Any]] | None = None,
        trust_annotations: bool = True,
        startup_timeout: float = 30.0,
        list_timeout: float = 30.0,
        call_timeout: float | None = 120.0,
        max_result_chars: int = 200_000,
        max_tools: int = 500,
        roots: Iterable[str | os.PathLike[str]] | None = None,
        sampling: AgentRef | None = None,
        elicitation: bool = False,
    ) -> None:
        label = name or transport.label
        if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
            raise ConfigurationError(
                f"MCP server {label!r}: prefix must use only letters, digits, '_' or '-', got {prefix!r}"
            )
        for what, value in (("startup_timeout", startup_timeout), ("list_timeout", list_timeout)):
            if not value > 0:
                raise ConfigurationError(f"MCP server {label!r}: {what} must be > 0, got {value!r}")
        if call_timeout is not None and not call_timeout > 0:
            raise ConfigurationError(
                f"MCP server {label!r}: call_timeout must be > 0 or None, got {call_timeout!r}"
            )
        for what, bound in (("max_result_chars", max_result_chars), ("max_tools", max_tools)):
            if not isinstance(bound, int) or bound < 1:
                raise ConfigurationError(
                    f"MCP server {label!r}: {what} must be >= 1, got {bound!r}"
                )
        self.label = label
        self.prefix = prefix
        self.allow = None if allow is None else frozenset(_names(allow, "allow", label))
        self.deny = frozenset(_names(deny, "deny", label))
        self.hints = {str(k): dict(v) for k, v in (hints or {}).items()}
        self.trust_annotations = trust_annotations
        self.call_timeout = call_timeout
        self.max_result_chars = max_result_chars
        self.transport = transport
        self._elicitations = Elicitations(label) if elicitation else None
        self._lock = threading.Lock()
        self._tools: dict[str, MCPTool] = {}  # by server tool name
        self.generation = 0
        """Grows when the set of tools offered changes (an AgentRef holding this server
        takes up the change before its next model call)."""
        self._error: ConfigurationError | None = None
        self._connection = Connection(
            label,
            transport,
            startup_timeout=startup_timeout,
            list_timeout=list_timeout,
            on_tools=self._offer,
            max_tools=max_tools,
            roots=None if roots is None else [_root(r, label) for r in roots],
            sampling=None if sampling is None else SamplingAnswerer(sampling, label),
            elicitation=self._elicitations,
        )

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MCPServer:
        """A server started as ``command args`` (env: extra variables; cwd: its directory)."""
        return cls(StdioTransport(command, args, env, cwd), **options)

    @classmethod
    def http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPServer:
        """A server reached over streamable HTTP at ``url`` (sending ``headers``)."""
        timeout = float(options.get("startup_timeout", 30.0))
        return cls(HTTPTransport(url, headers, timeout), **options)

    @classmethod
    def sse(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPServer:
        """A server reached over the older HTTP+SSE transport at ``url`` (its SSE endpoint,
        often ``.../sse``), sending ``headers``; needs an ``mcp`` SDK that still has it."""
        timeout = float(options.get("startup_timeout", 30.0))
        return cls(SSETransport(url, headers, timeout), **options)

    # -- the tool source ----------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Connect if needed; the server's tools (filtered, prefixed) as tether Tools.

        Raises MCPConnectionError when the server cannot be started or reached, and
        ConfigurationError for a filter or hint naming a tool the server does not offer.
        """
        self._connection.list_tools()
        with self._lock:
            if self._error is not None:
                raise self._error
            return [t for t in self._tools.values() if not t.gone]

    def offered(self) -> list[Tool]:
        """The tools offered now, as last listed (no I/O; empty before the first listing)."""
        with self._lock:
            if self._error is not None:
                return []
            return [t for t in self._tools.values() if not t.gone]

    def close(self) -> None:
        """Close the connection (stopping a stdio server); the next use reconnects."""
        self._connection.close()
        close = getattr(self.transport, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> MCPServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def listed(self) -> bool:
        """True once the tools were listed (before: :meth:`offered` is empty, nothing started)."""
        return self._connection.connects > 0

    @property
    def connects(self) -> int:
        """How many times a session was opened (1 + restarts after the server went away)."""
        return self._connection.connects

    def __repr__(self) -> str:
        return f"MCPServer({self.label!r})"

    # -- internals --------------------------------------------------------------------

    def _offer(self, definitions: list[mcp_types.Tool]) -> None:
        """Build or update the tools from the server's listing (called in the connection thread)."""
        with self._lock:
            before = self._offer_key()
            try:
                chosen = self._choose(definitions)
                for mcp_name, tool in self._tools.items():
                    if mcp_name not in chosen:
                        tool.gone = True
                for mcp_name, (definition, hints) in chosen.items():
                    existing = self._tools.get(mcp_name)
                    if existing is not None:
                        existing.update(definition, hints, self.call_timeout)
                    else:
                        self._tools[mcp_name] = MCPTool(
                            definition,
                            name=local_name(mcp_name, self.prefix),
                            server=self.label,
                            hints=hints,
                            call_timeout=self.call_timeout,
                            call=self._call,
                            wants_context=True,  # progress (and elicitation) need it
                        )
            except ConfigurationError as exc:
                self._error = exc
            else:
                self._error = None
            if self._offer_key() != before:
                self.generation += 1

    def _offer_key(self) -> frozenset[str] | None:
        if self._error is not None:
            return None
        return frozenset(n for n, t in self._tools.items() if not t.gone)

    def _choose(
        self, definitions: list[mcp_types.Tool]
    ) -> dict[str, tuple[mcp_types.Tool, ToolHints]]:
        offered = {d.name: d for d in definitions}
        named = (self.allow or frozenset()) | self.deny | set(self.hints)
        missing = sorted(named - set(offered))
        if missing:
            raise ConfigurationError(
                f"MCP server {self.label!r} does not offer {', '.join(map(repr, missing))} "
                f"(named in allow=, deny= or hints=); it offers: {', '.join(sorted(offered)) or 'no tools'}"
            )
        chosen: dict[str, tuple[mcp_types.Tool, ToolHints]] = {}
        local: dict[str, str] = {}
        for mcp_name, definition in offered.items():
            if (self.allow is not None and mcp_name not in self.allow) or mcp_name in self.deny:
                continue
            name = local_name(mcp_name, self.prefix)
            if not name:
                raise ConfigurationError(
                    f"MCP server {self.label!r} offers a tool with an empty name; give a prefix="
                )
            if name in local:
                raise ConfigurationError(
                    f"MCP server {self.label!r} offers tools {local[name]!r} and {mcp_name!r}, "
                    f"which both become {name!r} (characters other than letters, digits, '_' "
                    "and '-' become '_', names are cut at 64); leave one out with deny=[...]"
                )
            local[name] = mcp_name
            hints = (
                ToolHints.from_annotations(definition.annotations)
                if self.trust_annotations
                else ToolHints()
            )
            if mcp_name in self.hints:
                hints = hints.override(mcp_name, self.hints[mcp_name])
            chosen[mcp_name] = (definition, hints)
        return chosen

    async def _call(self, tool: MCPTool, arguments: dict[str, Any]) -> str | ToolOutput:
        context = arguments.pop(CONTEXT_KEY, None)
        if tool.gone:
            raise MCPToolError(
                f"tool {tool.name!r} is no longer offered by MCP server {self.label!r} "
                "(its tool list changed)"
            )
        progress = _progress_to(context)
        parent = _trace_parent(context)
        if self._elicitations is None:
            result = await self._connection.call_tool(
                tool.mcp_name, arguments, tool.name, progress, parent
            )
        else:
            result = await self._call_answering(
                tool, arguments, context, self._elicitations, progress, parent
            )
        return result_text(result, tool.name, self.max_result_chars)

    async def _call_answering(
        self,
        tool: MCPTool,
        arguments: dict[str, Any],
        context: ToolContext | None,
        elicitations: Elicitations,
        progress: ProgressReport | None,
        parent: Any,
    ) -> mcp_types.CallToolResult:
        """The call, answering the server's questions while it runs (see elicitation.py)."""
        from mcp_types import ElicitResult

        asking = elicitations.open()
        call = asyncio.ensure_future(
            self._connection.call_tool(tool.mcp_name, arguments, tool.name, progress, parent)
        )
        try:
            while True:
                question = asyncio.ensure_future(asking.queue.get())
                done, _ = await asyncio.wait({call, question}, return_when=asyncio.FIRST_COMPLETED)
                if call in done:
                    question.cancel()
                    return call.result()
                params, reply = question.result()
                try:
                    reply.set_result(await ask(self.label, tool, asking, params, context))
                finally:
                    if not reply.done():  # an interrupt or a cancel: the call ends
                        reply.set_result(ElicitResult(action="cancel"))
        finally:
            elicitations.close(asking)
            if not call.done():
                call.cancel()
                await asyncio.gather(call, return_exceptions=True)


def _trace_parent(context: ToolContext | None) -> Any:
    """The OpenTelemetry context of the call's ``execute_tool`` span (None: not traced), so
    the SDK's spans of the call, made in the connection's thread, are its children."""
    tracing = sys.modules.get("tether.observe.tracing")
    if context is None or tracing is None or context.tool_call is None:
        return None
    span = tracing.tool_span(context.agent, context.tool_call.id)
    if span is None:
        return None
    from opentelemetry import trace

    return trace.set_span_in_context(span)


def _progress_to(context: ToolContext | None) -> ProgressReport | None:
    """The call's ``notifications/progress`` as ToolProgress stream events (None: the call
    streams nothing, so the server is not asked for progress)."""
    if context is None or context.outlet is None:
        return None

    async def report(progress: float, total: float | None, message: str | None) -> None:
        context.progress(progress, total, message)  # thread-safe: this is the connection's loop

    return report


def _names(values: Iterable[str], what: str, label: str) -> list[str]:
    if isinstance(values, str):
        raise ConfigurationError(
            f"MCP server {label!r}: {what}= takes a list of tool names, got the string {values!r}"
        )
    names = list(values)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise ConfigurationError(f"MCP server {label!r}: {what}= takes tool names, got {bad[0]!r}")
    return names


def _root(value: str | os.PathLike[str], label: str) -> tuple[str, str]:
    """(file:// URI, name) of a root given as a path or a file:// URI."""
    text = os.fspath(value)
    if isinstance(text, str) and text.startswith("file://"):
        return text, text.rstrip("/").rsplit("/", 1)[-1]
    if not isinstance(text, str) or "://" in text:
        raise ConfigurationError(
            f"MCP server {label!r}: roots= takes directories or file:// URIs, got {value!r}"
        )
    path = Path(text).resolve()
    return path.as_uri(), path.name
