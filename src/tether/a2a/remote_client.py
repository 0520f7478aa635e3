"""One call's connection to a remote A2A agent: the SDK's client over a bounded httpx.

Every request has a timeout and every response body is cut off past
:data:`MAX_RESPONSE_BYTES` (a stream's too), so a remote can make a call fail but never
hold unbounded memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from tether.a2a.remote_card import RemoteCard
from tether.a2a.remote_errors import RemoteAgentError
from tether.a2a.remote_task import state_of

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types.a2a_pb2 import Message, Task

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
REQUEST_TIMEOUT = 30.0
MAX_STREAM_EVENTS = 10_000
POLL_FIRST, POLL_MAX = 0.05, 1.0
MOVING = frozenset({"submitted", "working", "unspecified"})


class Unreachable(RemoteAgentError):
    """The remote could not be asked (``sent``: whether the request may have reached it).
    Never leaves the call: it becomes a tool error or an in-doubt interrupt."""

    def __init__(self, detail: str, *, sent: bool) -> None:
        super().__init__(detail)
        self.sent = sent


class _Capped(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, url: str) -> None:
        self._inner = inner
        self._url = url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._inner:
            total += len(chunk)
            if total > MAX_RESPONSE_BYTES:
                raise RemoteAgentError(
                    f"the response from {self._url} is over {MAX_RESPONSE_BYTES} bytes"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Capped(response.stream, str(request.url))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class Remote:
    """The SDK client for one call (``async with``); errors reaching it are :class:`Unreachable`."""

    def __init__(self, card: RemoteCard, headers: dict[str, str]) -> None:
        self.card = card
        self._http = httpx.AsyncClient(
            transport=_CappedTransport(),
            headers=headers,
            timeout=REQUEST_TIMEOUT,
            follow_redirects=False,
        )
        self._client: Client | None = None

    async def __aenter__(self) -> Remote:
        from a2a.client import ClientConfig, ClientFactory

        config = ClientConfig(httpx_client=self._http, streaming=self.card.streaming)
        self._client = ClientFactory(config).create(self.card.card)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._http.aclose()

    @property
    def client(self) -> Client:
        assert self._client is not None
        return self._client

    async def send(
        self, message: Message, known: Callable[[str], Awaitable[None]]
    ) -> Task | Message:
        """Send ``message``; ``known(task_id)`` is awaited once the task id is known (before
        anything else is read). Returns the task as the remote holds it when the stream ends
        (or the remote's direct reply, a Message, when it made no task)."""
        from a2a.types.a2a_pb2 import SendMessageRequest

        task_id: str | None = message.task_id or None
        try:
            events = 0
            async for event in self.client.send_message(SendMessageRequest(message=message)):
                events += 1
                found = _task_id(event)
                if found and task_id is None:
                    task_id = found
                    await known(found)
                elif event.HasField("message") and task_id is None:
                    return event.message
                if events >= MAX_STREAM_EVENTS:
                    break
        except Exception as exc:
            _classify(exc, self.card.name)
            raise Unreachable(_detail(exc), sent=not _never_sent(exc)) from None
        if task_id is None:
            raise RemoteAgentError(f"the remote agent {self.card.name!r} answered with no task")
        return await self.get(task_id)

    async def get(self, task_id: str) -> Task:
        from a2a.types.a2a_pb2 import GetTaskRequest

        task: Task = await self._ask(self.client.get_task(GetTaskRequest(id=task_id)))
        return task

    async def find(self, context_id: str) -> Task | None:
        """The task of ``context_id`` (the call's), or None when the remote has none."""
        from a2a.types.a2a_pb2 import ListTasksRequest

        listed = await self._ask(
            self.client.list_tasks(ListTasksRequest(context_id=context_id, page_size=10))
        )
        tasks = [t for t in listed.tasks if t.context_id == context_id]
        return tasks[0] if tasks else None

    async def wait(self, task: Task) -> Task:
        """Poll ``task`` until it leaves submitted / working (the caller bounds the time)."""
        delay = POLL_FIRST
        while state_of(task) in MOVING:
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_MAX)
            task = await self.get(task.id)
        return task

    async def cancel(self, task_id: str) -> None:
        """Ask the remote to cancel (best effort: the caller is stopping anyway)."""
        from a2a.types.a2a_pb2 import CancelTaskRequest

        try:
            async with asyncio.timeout(5):
                await self.client.cancel_task(CancelTaskRequest(id=task_id))
        except Exception as exc:
            if not _is_remote_error(exc) and not isinstance(exc, TimeoutError):
                raise

    async def _ask(self, request: Awaitable[Any]) -> Any:
        try:
            return await request
        except Exception as exc:
            _classify(exc, self.card.name)
            raise Unreachable(_detail(exc), sent=True) from None


def _task_id(event: Any) -> str | None:
    if event.HasField("task"):
        return str(event.task.id) or None
    if event.HasField("status_update"):
        return str(event.status_update.task_id) or None
    if event.HasField("artifact_update"):
        return str(event.artifact_update.task_id) or None
    return None


def _is_remote_error(exc: BaseException) -> bool:
    from a2a.utils.errors import A2AError

    return isinstance(exc, A2AError | httpx.HTTPError)


def _classify(exc: Exception, name: str) -> None:
    """Re-raise what is not the remote's; raise RemoteAgentError when the remote answered
    with a refusal (a JSON-RPC error, an HTTP 4xx); return for an unreachable remote."""
    from a2a.client import A2AClientError

    if not _is_remote_error(exc):
        raise exc
    status = _status(exc)
    if (not isinstance(exc, A2AClientError | httpx.HTTPError)) or (
        status is not None and 400 <= status < 500
    ):
        raise RemoteAgentError(f"the remote agent {name!r} refused: {_detail(exc)}") from None


def _status(exc: BaseException) -> int | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.HTTPStatusError):
            return seen.response.status_code
        seen = seen.__cause__
    return None


def _never_sent(exc: BaseException) -> bool:
    """Whether the request surely never reached the remote (the connection was refused)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.ConnectError):
            return True
        seen = seen.__cause__
    return False


def _detail(exc: BaseException) -> str:
    from tether.a2a.remote_card import clean

    return clean(f"{type(exc).__name__}: {exc}", 500)
