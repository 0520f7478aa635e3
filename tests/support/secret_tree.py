"""An agent tree whose leaf logs in with a password: the leaf's call masks it, its result and
every answer above quote it (the one-redaction-path tests for a whole tree).

``lead`` -> ``ops`` (as_tool, which calls ``login(user, password)``); with ``depth=3``
``lead`` -> ``ops`` -> ``leaf`` (which calls ``login``). ``confirm=True`` puts a Confirm before
``login`` (the lead's policy, inherited): the tree suspends there.
"""

from __future__ import annotations

from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import Store
from tether.models import ScriptedModel

SECRET = "hunter2-TREE-SECRET"


class ConfirmLogin(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        if event.tool_call.name == "login":
            return Confirm("log in?")
        return None


@tool
def login(user: str, password: str) -> str:
    """Log in."""
    return f"welcome {user}, logged in with {password}"


def _relay(name: str, tool_name: str, call_id: str) -> Any:
    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return f"{name}: " + messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": call_id, "name": tool_name, "args": {"task": "log in"}}]}

    return turn


def _leaf(messages: list[Any], specs: list[Any]) -> Any:
    if messages[-1].role == "tool":
        return "done: " + messages[-1].tool_results[0].content
    args = {"user": "alice", "password": SECRET}
    return {"tool_calls": [{"id": "l1", "name": "login", "args": args}]}


def tree(store: Store | None = None, session_id: str | None = None, **options: Any) -> Agent:
    """The lead of the tree (``depth`` 2 or 3, ``confirm`` a Confirm before login)."""
    depth = options.pop("depth", 2)
    confirm = options.pop("confirm", False)
    lead_call = options.pop("lead_call", "t1")  # a long one gives a hashed child session id
    ops = Agent(model=ScriptedModel(_leaf), tools=[login])
    if depth == 3:
        leaf = ops
        ops = Agent(model=ScriptedModel(_relay("ops", "leaf", "o1")), tools=[leaf.as_tool("leaf")])
    return Agent(
        model=ScriptedModel(_relay("lead", "ops", lead_call)),
        tools=[ops.as_tool("ops")],
        store=store,
        session_id=session_id,
        interventions=[ConfirmLogin()] if confirm else [],
        **options,
    )


def agents_of(lead: Agent) -> list[Agent]:
    """The agents of the tree, the lead first."""
    out = [lead]
    while True:
        tools = [t for t in out[-1].tool_map.values() if getattr(t, "_instance", None)]
        if not tools:
            return out
        out.append(tools[0]._instance)


def make_agent(session_id: str) -> Agent:
    """``--app secret_tree:make_agent``."""
    from tether.durable import MemoryStore

    return tree(MemoryStore(), session_id)
