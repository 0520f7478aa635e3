"""How to reach an MCP server: a subprocess over stdio, streamable HTTP, or HTTP+SSE."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import IO, Any, Protocol
from urllib.parse import urlsplit

from tether.errors import ConfigurationError

_STDERR_TAIL = 800


class Transport(Protocol):
    """Opens (read stream, write stream) pairs for an MCP ClientSession."""

    label: str

    def open(self) -> AbstractAsyncContextManager[tuple[Any, Any]]: ...

    def diagnostics(self) -> str:
        """Recent output that helps explain a failure (the server's stderr), or ''."""
        ...


class StdioTransport:
    """Starts ``command args`` as a child process and speaks MCP on its stdin/stdout.

    The child's stderr goes to a temporary file whose tail is quoted in startup errors.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
    ) -> None:
        if not isinstance(command, str) or not command:
            raise ConfigurationError(
                f"MCPServer.stdio: command must be a non-empty string, got {command!r}"
            )
        if isinstance(args, str):
            raise ConfigurationError(
                f"MCPServer.stdio: args must be a sequence of strings, got the string {args!r} "
                "(wrap it in a list)"
            )
        self.command = command
        self.args = [str(a) for a in args]
        self.env = dict(env) if env is not None else None
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.label = os.path.basename(command)
        self._stderr: IO[str] | None = None

    def open(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        return self._open()

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[tuple[Any, Any]]:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        if shutil.which(self.command, path=(self.env or {}).get("PATH")) is None:
            raise ConfigurationError(
                f"command {self.command!r} was not found (not an executable file, nor on PATH); "
                "check the command, or give its full path"
            )
        if self._stderr is not None:
            self._stderr.close()
        # Kept open after this call: diagnostics() reads its tail when a start fails.
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        params = StdioServerParameters(
            command=self.command, args=self.args, env=self.env, cwd=self.cwd
        )
        async with stdio_client(params, errlog=self._stderr) as streams:
            yield streams

    def diagnostics(self) -> str:
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        try:
            stream.flush()
            size = stream.seek(0, os.SEEK_END)
            stream.seek(max(0, size - _STDERR_TAIL * 4))
            tail = stream.read()[-_STDERR_TAIL:].strip()
        except (OSError, ValueError):
            return ""
        return f"the server's stderr ends with: {tail!r}" if tail else ""

    def close(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


class HTTPTransport:
    """Connects to a streamable HTTP MCP endpoint (``http(s)://host:port/mcp``)."""

    kind = "http"

    def __init__(self, url: str, headers: Mapping[str, str] | None, timeout: float) -> None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigurationError(
                f"MCPServer.{self.kind}: url must be an http:// or https:// URL, got {url!r}"
            )
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.label = parts.netloc.rpartition("@")[2] + parts.path

    def open(self) -> AbstractAsyncContextManager[tuple[Any, Any]]:
        return self._open()

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[tuple[Any, Any]]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # Reads stay open for long calls; the call timeout is enforced by tether.
        timeout = httpx2.Timeout(self.timeout, read=None)
        async with (
            httpx2.AsyncClient(headers=self.headers, timeout=timeout) as client,
            streamable_http_client(self.url, http_client=client) as streams,
        ):
            yield streams

    def diagnostics(self) -> str:
        return ""

    def close(self) -> None:
        pass


_SSE_READ_TIMEOUT = 24 * 3600.0  # between two events; a call's own timeout is tether's


class SSETransport(HTTPTransport):
    """Connects to an MCP server over the older HTTP+SSE transport (``.../sse``), where
    the installed ``mcp`` SDK still offers its SSE client."""

    kind = "sse"

    @contextlib.asynccontextmanager
    async def _open(self) -> AsyncIterator[tuple[Any, Any]]:
        try:
            from mcp.client.sse import sse_client
        except ImportError as exc:
            raise ConfigurationError(
                f"the installed mcp SDK has no SSE client ({exc}); reach the server with "
                "MCPServer.http(url) (streamable HTTP) if it offers that"
            ) from None
        async with sse_client(
            self.url,
            headers=self.headers,
            timeout=self.timeout,
            sse_read_timeout=_SSE_READ_TIMEOUT,
        ) as streams:
            yield streams
