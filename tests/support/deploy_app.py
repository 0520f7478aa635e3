"""The issue-20 agent: a Transform pins ``env`` to staging ahead of a Confirm.

``deploy(env, replicas, api_token)``; the scripted model asks for prod with 5 replicas
and a secret token; ``PinStaging`` rewrites env to staging, then ``AskBeforeDeploy``
asks a human. Every run appends the arguments it ran with to $DEPLOY_LOG (one JSON
line); $DEPLOY_DB is the SQLite store; with $DEPLOY_PING a deploy first GETs that URL. ``factory`` serves ``--app deploy_app:factory``
(the CLI, the HTTP server, the worker, ``tether mcp serve``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler, Transform
from tether.durable import SQLiteStore, Store
from tether.messages import ToolCall
from tether.models import ScriptedModel

SECRET = "sk-deploy-7c1e9a44b2"


class PinStaging(InterventionHandler):
    """Every deploy goes to staging."""

    def before_tool_call(self, event: BeforeToolCall) -> Transform | None:
        if event.tool_call.name != "deploy":
            return None

        def pin(call: ToolCall) -> ToolCall:
            return ToolCall(call.id, call.name, {**call.arguments, "env": "staging"})

        return Transform(pin)


class AskBeforeDeploy(InterventionHandler):
    """A person approves every deploy (no confirm callback: the run suspends)."""

    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name != "deploy":
            return None
        args = event.tool_call.arguments
        return Confirm(f"deploy {args['replicas']} replicas to {args['env']}?")


@tool
def deploy(env: str, replicas: int, api_token: str) -> str:
    """Deploy the service."""
    if os.environ.get("DEPLOY_PING"):  # a real HTTP request through httpx2 (it logs at INFO)
        import httpx2

        httpx2.get(os.environ["DEPLOY_PING"], timeout=10)
    with open(os.environ["DEPLOY_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"env": env, "replicas": replicas, "api_token": api_token}) + "\n")
    return f"deployed {replicas} to {env}"


def script(messages: list[Any], specs: list[dict[str, Any]]) -> Any:
    if messages[-1].role == "tool":
        return "done: " + messages[-1].tool_results[0].content
    args = {"env": "prod", "replicas": 5, "api_token": SECRET}
    return {"tool_calls": [{"name": "deploy", "args": args}]}


def deploy_agent(store: Store | None, session_id: str) -> Agent:
    return Agent(
        ScriptedModel(script),
        tools=[deploy],
        interventions=[PinStaging(), AskBeforeDeploy()],
        store=store,
        session_id=session_id,
    )


def factory(session_id: str) -> Agent:
    db = os.environ.get("DEPLOY_DB")
    return deploy_agent(SQLiteStore(db) if db else None, session_id)


def ran(log: str) -> list[dict[str, Any]]:
    """The arguments every deploy ran with, in order."""
    if not os.path.exists(log):
        return []
    with open(log, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


if __name__ == "__main__":  # resume SESSION in a new process: python deploy_app.py SESSION
    import asyncio

    from tether.durable import SQLiteStore as _Store

    async def _resume(session_id: str) -> None:
        store = _Store(os.environ["DEPLOY_DB"])
        agent = deploy_agent(store, session_id)
        answers = await store.approvals.answers_for(session_id)
        result = await agent.resume_async(answers)
        print(result.stop_reason, result.text)
        agent.close()
        await store.close()

    asyncio.run(_resume(sys.argv[1]))
