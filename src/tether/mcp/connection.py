"""One MCP client connection, owned by a background thread and its event loop.

An MCP ClientSession (anyio task groups inside) belongs to the task that entered it,
while an Agent may run in any event loop (the sync facade keeps one asyncio.Runner per
thread). So the session lives in a private loop on a daemon thread: callers in any loop
or thread submit coroutines to it and await the result. Cancelling the caller's await
cancels the call in the private loop, which sends the protocol's cancellation.
The loop and its thread are :mod:`~tether.mcp.private_loop`'s, the paged tool listing
:mod:`~tether.mcp.tool_listing`'s; this module opens, watches and reopens the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tether.mcp.errors import MCPConnectionError, MCPToolError
from tether.mcp.plumbing import WatchedStream, describe, printable
from tether.mcp.private_loop import TEARDOWN_TIMEOUT, PrivateLoop, under
from tether.mcp.tool_listing import list_all_tools

if TYPE_CHECKING:
    import mcp_types

    from mcp import ClientSession
    from tether.mcp.transports import Transport

T = TypeVar("T")


class ProgressReport(Protocol):
    """Gets a call's progress notifications (the SDK's ``ProgressFnT``)."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


_LOG = logging.getLogger("tether.mcp")
_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


@dataclass(eq=False)
class _Live:
    """One open session; ``closed`` is set when the server hangs up or we close it."""

    closed: asyncio.Event
    ready: asyncio.Future[list[mcp_types.Tool]]
    task: asyncio.Task[None] | None = None
    session: ClientSession | None = None
    tools: list[mcp_types.Tool] = field(default_factory=list)
    refreshing: asyncio.Task[None] | None = None  # re-listing after tools/list_changed
    stale: bool = False  # another list_changed came while ``refreshing`` ran


class Connection:
    """Opens on first use, shared by every call, reopened after the server goes away."""

    def __init__(
        self,
        label: str,
        transport: Transport,
        *,
        startup_timeout: float,
        list_timeout: float,
        on_tools: Callable[[list[mcp_types.Tool]], None],
        max_tools: int = 500,
        roots: list[tuple[str, str]] | None = None,
        sampling: Callable[..., Any] | None = None,
        elicitation: Callable[..., Any] | None = None,
    ) -> None:
        self.label = label
        self.roots = roots
        self.sampling = sampling
        self.elicitation = elicitation
        self.transport = transport
        self.startup_timeout = startup_timeout
        self.list_timeout = list_timeout
        self.max_tools = max_tools
        self._on_tools = on_tools
        self._private = PrivateLoop(label)
        self._live: _Live | None = None
        self._opening: asyncio.Lock | None = None  # created in the private loop
        self._log = logging.getLogger(f"tether.mcp.{label}")
        self.connects = 0
        """How many times a session was opened (1 + the restarts)."""

    # -- called from any thread or loop ---------------------------------------------------

    def run_sync(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coroutine`` in the private loop and wait for it (blocking)."""
        return self._private.run_sync(coroutine, timeout)

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` in the private loop; cancelling this await cancels it there."""
        return await self._private.run(coroutine)

    def list_tools(self) -> list[mcp_types.Tool]:
        """Connect if needed and return the server's tools (blocking)."""
        return self.run_sync(self._list_now(), self.startup_timeout + self.list_timeout + 5)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        tool_label: str,
        progress: ProgressReport | None = None,
        parent: Any = None,
    ) -> mcp_types.CallToolResult:
        """Call a tool; a server that went away between calls is restarted first.
        ``progress`` gets the call's progress notifications (in the connection's thread);
        ``parent``, an OpenTelemetry context, is current while the call runs there."""
        call = self._call(name, arguments, tool_label, progress)
        return await self.run(call if parent is None else under(parent, call))

    def close(self) -> None:
        """Close the session and stop the private loop; the connection can reopen later."""
        if self._private.stop(self._shutdown):
            self._opening = None  # bound to the stopped loop

    # -- in the private loop ---------------------------------------------------------------

    async def _list_now(self) -> list[mcp_types.Tool]:
        return (await self._session()).tools

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        tool_label: str,
        progress: ProgressReport | None = None,
    ) -> mcp_types.CallToolResult:
        from mcp_types import CONNECTION_CLOSED

        from mcp import MCPError

        live = await self._session()
        assert live.session is not None
        try:
            result = await live.session.call_tool(name, arguments, progress_callback=progress)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED:
                live.closed.set()
                raise MCPToolError(
                    f"MCP server {self.label!r} closed the connection during the call to "
                    f"{tool_label!r}; the call may or may not have taken effect (the server "
                    "is restarted on the next call)"
                ) from None
            raise MCPToolError(
                f"MCP server {self.label!r} refused the call to {tool_label!r}: {exc.error.message}"
            ) from None
        except (RuntimeError, ValueError) as exc:  # the SDK's result checks, malformed results
            raise MCPToolError(
                f"MCP server {self.label!r} answered the call to {tool_label!r} with a result "
                f"tether cannot use: {exc}"
            ) from None
        refreshing = live.refreshing
        if refreshing is not None and not refreshing.done():
            # The call changed the tool list: the caller's next model call sees the new one.
            await asyncio.wait({refreshing}, timeout=self.list_timeout)
        return result

    async def _session(self) -> _Live:
        live = self._live
        if live is not None and live.session is not None and not live.closed.is_set():
            return live
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            live = self._live
            if live is not None and live.session is not None and not live.closed.is_set():
                return live
            restarting = self.connects > 0
            if live is not None:
                await self._teardown(live)
                self._live = None
            try:
                self._live = await self._connect()
            except MCPConnectionError as exc:
                if restarting:
                    raise MCPConnectionError(
                        f"MCP server {self.label!r} went away and could not be restarted: {exc}"
                    ) from None
                raise
            return self._live

    async def _connect(self) -> _Live:
        loop = asyncio.get_running_loop()
        live = _Live(closed=asyncio.Event(), ready=loop.create_future())
        # The session outlives the call that opened it: it runs in a context of its own
        # (its SDK spans are not children of that call's span, nor its other contextvars).
        live.task = asyncio.create_task(self._own(live), context=contextvars.Context())
        try:
            async with asyncio.timeout(self.startup_timeout):
                tools = await asyncio.shield(live.ready)
        except TimeoutError:
            await self._teardown(live)
            raise MCPConnectionError(
                f"MCP server {self.label!r} did not finish starting within "
                f"{self.startup_timeout:g} s (startup_timeout){self._why()}; check that it "
                "is an MCP server and that it starts, or raise startup_timeout"
            ) from None
        except MCPConnectionError:
            await self._teardown(live)
            raise
        except Exception as exc:
            await self._teardown(live)
            raise MCPConnectionError(
                f"could not start MCP server {self.label!r}: {describe(exc)}{self._why()}"
            ) from None
        self.connects += 1
        live.tools = tools
        self._on_tools(tools)
        return live

    def _why(self) -> str:
        text = self.transport.diagnostics()
        return f" ({text})" if text else ""

    async def _own(self, live: _Live) -> None:
        """Open the transport and session in this task, hold them until ``closed``."""
        from mcp_types import Implementation

        from mcp import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self.transport.open())
                session = ClientSession(
                    WatchedStream(read, live.closed.set),
                    write,
                    logging_callback=self._on_log,
                    message_handler=lambda message: self._on_message(live, message),
                    list_roots_callback=self._list_roots if self.roots is not None else None,
                    sampling_callback=self.sampling,
                    elicitation_callback=self.elicitation,
                    client_info=Implementation(name="tether", version="0.1.0"),
                )
                await stack.enter_async_context(session)
                await session.initialize()
                tools = await self._list(session)
                live.session = session
                if not live.ready.done():
                    live.ready.set_result(tools)
                await live.closed.wait()
        except Exception as exc:
            while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]  # the session's task group wraps the one error
            if not live.ready.done():
                live.ready.set_exception(exc)
            else:
                self._log.warning("MCP server %r: the connection ended: %s", self.label, exc)
        finally:
            live.closed.set()
            if not live.ready.done():
                live.ready.set_exception(
                    MCPConnectionError(
                        f"MCP server {self.label!r} closed the connection{self._why()}"
                    )
                )

    async def _list(self, session: ClientSession) -> list[mcp_types.Tool]:
        return await list_all_tools(
            session, self.label, list_timeout=self.list_timeout, max_tools=self.max_tools
        )

    async def _teardown(self, live: _Live) -> None:
        live.closed.set()
        task = live.task
        if task is None or task.done():
            return
        if live.session is None:
            task.cancel()  # still starting: nothing to hand back
        done, _ = await asyncio.wait({task}, timeout=TEARDOWN_TIMEOUT)
        if not done:
            task.cancel()
            await asyncio.wait({task}, timeout=TEARDOWN_TIMEOUT)

    async def _shutdown(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            await self._teardown(live)
        # Calls still waiting (for a restart, say) end now: their callers get an error.
        me = asyncio.current_task()
        rest = [t for t in asyncio.all_tasks() if t is not me]
        for task in rest:
            task.cancel()
        if rest:
            await asyncio.wait(rest, timeout=TEARDOWN_TIMEOUT)

    async def _refresh(self, live: _Live) -> None:
        """Re-list until no ``list_changed`` arrived during the last listing: however many
        notifications come, one listing runs and at most one more is queued behind it."""
        while True:
            live.stale = False
            if live.session is None or live.closed.is_set():
                return
            try:
                live.tools = await self._list(live.session)
                self._on_tools(live.tools)
            except Exception as exc:
                self._log.warning("MCP server %r: re-listing tools failed: %s", self.label, exc)
            if not live.stale:
                return

    async def _on_message(self, live: _Live, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, Exception):
            text = describe(message)
            if not live.ready.done():
                live.ready.set_exception(
                    MCPConnectionError(
                        f"MCP server {self.label!r} sent something that is not an MCP message "
                        f"({text}); a stdio server must write only JSON-RPC lines to stdout "
                        "(logs go to stderr)"
                    )
                )
            else:
                self._log.warning("MCP server %r sent an unreadable message: %s", self.label, text)
        elif isinstance(message, ToolListChangedNotification):
            if live.refreshing is not None and not live.refreshing.done():
                live.stale = True  # the listing in flight is followed by one more
            else:
                live.refreshing = asyncio.get_running_loop().create_task(self._refresh(live))

    async def _list_roots(self, context: Any) -> mcp_types.ListRootsResult:
        from mcp_types import ListRootsResult, Root

        roots = [Root(uri=uri, name=name) for uri, name in self.roots or ()]  # type: ignore[arg-type]
        return ListRootsResult(roots=roots)

    async def _on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        level = _LOG_LEVELS.get(str(params.level), logging.INFO)
        self._log.log(level, "%s", printable(params.data))
