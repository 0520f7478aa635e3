"""Strands' row of bench/workflows.py (bench/.venvs/strands): a ``GraphBuilder`` graph of
five Strands Agents on an instant fake model (one text reply each), in memory only
(Strands' Graph has no checkpointer to compare with SQLite)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from importlib.metadata import version
from typing import Any

from _strands_fake import FakeModel, text_events
from _workflow_harness import EDGES, NODES, PROMPT, args, measure, reply
from strands import Agent
from strands.multiagent import GraphBuilder


class Replying(FakeModel):
    def __init__(self, text: str) -> None:
        self.text = text

    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        for event in text_events(self.text):
            yield event


def build() -> Any:
    builder = GraphBuilder()
    for name in NODES:
        agent = Agent(model=Replying(reply(name)), name=name, callback_handler=None)
        builder.add_node(agent, name)
    for source, target in EDGES:
        builder.add_edge(source, target)
    builder.set_entry_point("plan")
    return builder.build()


def main() -> None:
    ns = args()
    if ns.mode != "memory":
        raise SystemExit("strands: memory only")

    graph = build()  # built once; each invocation starts the agents' conversations afresh
    agents = [node.executor for node in graph.nodes.values()]

    async def invoke(i: int) -> Any:
        for agent in agents:
            agent.messages = []
        return await graph.invoke_async(PROMPT)

    def check(out: Any) -> None:
        assert str(out.status).lower().endswith("completed"), out.status
        order = [n.node_id for n in out.execution_order]
        assert sorted(order) == sorted(NODES), order  # each node once: join waited for a and b
        assert order[-2:] == ["join", "final"], order

    measure(invoke, ns, "strands", f"strands-agents {version('strands-agents')}", None, check)


if __name__ == "__main__":
    main()
