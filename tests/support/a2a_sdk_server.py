"""An A2A agent built only from a2a-sdk's own classes (no tether code), for RemoteAgent tests.

Its executor reads the task text: ``fail ...`` fails the task, ``reject ...`` rejects it,
``cancel ...`` cancels it, ``login ...`` wants authorization; anything else asks for input once (a data part
``{"id": "color", "name": "color", "reason": "Which color?"}`` in the input-required
status) and completes with ``done: <task> in <answer>`` when the caller's next message on
the task carries ``{"color": <answer>}`` in a data part. ``hold ...`` makes the task, then waits
until ``GET /release``; ``quiet ...`` waits before it makes the task, an answer ``slow ...`` before it completes (the crash tests kill
the caller meanwhile). ``GET /stats`` counts what it received and did:
``{"messages": n, "new_tasks": n, "continued": n, "asked": n, "canceled": n}``; ``GET
/answers`` lists the data parts of the answers it got.

Run as a script (``python a2a_sdk_server.py PORT``) to serve on 127.0.0.1:PORT in its own
process; ``serve()`` serves in a thread of the test process.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from a2a.helpers.proto_helpers import (
    get_data_parts,
    get_message_text,
    new_data_part,
    new_task_from_user_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    TaskState,
)
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

QUESTION = {"id": "color", "name": "color", "reason": "Which color?"}


class Stats:
    def __init__(self) -> None:
        self.messages = 0
        self.new_tasks = 0
        self.continued = 0
        self.asked = 0
        self.canceled = 0
        self.answers: list[dict[str, Any]] = []
        self.release = asyncio.Event()


class PaintExecutor(AgentExecutor):
    """Asks for a color once, then completes."""

    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        self.stats.messages += 1
        task = context.current_task
        if task is None and get_message_text(message).startswith("quiet"):
            await self.stats.release.wait()  # says nothing (no task yet) until released
        if task is None:
            self.stats.new_tasks += 1
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        else:
            self.stats.continued += 1
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = get_message_text(message)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            answers = [d for d in get_data_parts(message.parts) if isinstance(d, dict)]
            self.stats.answers.extend(answers)
            color = next((a["color"] for a in answers if "color" in a), None)
            if color is None:
                await updater.requires_input(self._ask(task.id, task.context_id))
                return
            if str(color).startswith("slow"):  # takes the answer, completes once released
                await self.stats.release.wait()
            first = get_message_text(task.history[0]) if task.history else "?"
            await updater.complete(self._say(task.id, task.context_id, f"done: {first} in {color}"))
            return
        if text.startswith("hold"):
            await updater.start_work()
            await self.stats.release.wait()
        if text.startswith("fail"):
            await updater.failed(self._say(task.id, task.context_id, "the paint ran out"))
        elif text.startswith("reject"):
            await updater.reject(self._say(task.id, task.context_id, "I do not paint that"))
        elif text.startswith("login"):
            await updater.requires_auth(self._say(task.id, task.context_id, "sign in first"))
        elif text.startswith("cancel"):
            await updater.cancel(self._say(task.id, task.context_id, "the painter left"))
        else:
            await updater.requires_input(self._ask(task.id, task.context_id))
            self.stats.asked += 1

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.stats.canceled += 1
        task = context.current_task
        if task is not None:
            await TaskUpdater(event_queue, task.id, task.context_id).cancel()

    @staticmethod
    def _say(task_id: str, context_id: str, text: str) -> Message:
        return Message(
            message_id=f"m-{time.monotonic_ns()}",
            role=Role.ROLE_AGENT,
            task_id=task_id,
            context_id=context_id,
            parts=[new_text_part(text)],
        )

    @staticmethod
    def _ask(task_id: str, context_id: str) -> Message:
        parts: list[Part] = [new_text_part("Which color?"), new_data_part(dict(QUESTION))]
        return Message(
            message_id=f"m-{time.monotonic_ns()}",
            role=Role.ROLE_AGENT,
            task_id=task_id,
            context_id=context_id,
            parts=parts,
        )


def build_app(
    base_url: str, token: str | None = None, *, streaming: bool = True
) -> tuple[Starlette, Stats]:
    """The Starlette app serving the card at the well-known path and JSON-RPC at /a2a
    (with ``token``: every route but /stats and /release wants ``Bearer <token>``)."""
    stats = Stats()
    card = AgentCard(
        name="painter",
        description="Paints things in a color you choose.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"{base_url}/a2a", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="paint", name="paint", description="Paint a thing.", tags=["paint"])],
    )
    handler = DefaultRequestHandlerV2(
        agent_executor=PaintExecutor(stats), task_store=InMemoryTaskStore(), agent_card=card
    )

    async def stats_route(request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "messages": stats.messages,
                "new_tasks": stats.new_tasks,
                "continued": stats.continued,
                "asked": stats.asked,
                "canceled": stats.canceled,
            }
        )

    async def answers_route(request: Request) -> JSONResponse:
        return JSONResponse(stats.answers)

    async def release_route(request: Request) -> JSONResponse:
        stats.release.set()
        return JSONResponse({"released": True})

    routes: list[Any] = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/a2a"),
        Route("/stats", stats_route),
        Route("/release", release_route),
        Route("/answers", answers_route),
    ]
    if token is None:
        return Starlette(routes=routes), stats

    async def bearer(request: Request, call_next: Any) -> Any:
        if request.url.path in ("/stats", "/release", "/answers") or request.headers.get(
            "authorization"
        ) == (f"Bearer {token}"):
            return await call_next(request)
        return JSONResponse({"error": "unauthorized"}, status_code=401)

    return Starlette(
        routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=bearer)]
    ), stats


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(token: str | None = None, *, streaming: bool = True) -> Iterator[str]:
    """Serve the agent in a thread on a free 127.0.0.1 port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app, _ = build_app(base, token, streaming=streaming)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the a2a-sdk test server did not start")
        time.sleep(0.02)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


if __name__ == "__main__":
    port = int(sys.argv[1])
    app, _ = build_app(f"http://127.0.0.1:{port}")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
