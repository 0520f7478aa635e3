"""The baseline of bench/protocols.py: an A2A server built only from a2a-sdk's classes.

An ``AgentExecutor`` that answers each message at once (the Task, one artifact with the
same reply tether's scripted agent gives, completed), the SDK's ``DefaultRequestHandler``
over its ``InMemoryTaskStore``, its card and JSON-RPC routes; served by uvicorn.
Usage: python bench/_a2a_bare.py PORT
"""

from __future__ import annotations

import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events.event_queue_v2 import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
)
from starlette.applications import Starlette


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        text = "".join(p.text for p in context.message.parts)
        await updater.add_artifact([Part(text=f"hi: {text}")], name="reply")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def app(port: int) -> Starlette:
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="bare",
        description="a2a-sdk only",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url + "/a2a", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="respond", name="respond", description="replies", tags=["chat"])],
    )
    handler = DefaultRequestHandler(Echo(), InMemoryTaskStore(), card)
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/a2a")]
    return Starlette(routes=routes)


if __name__ == "__main__":
    port = int(sys.argv[1])
    uvicorn.run(app(port), host="127.0.0.1", port=port, log_level="warning")
