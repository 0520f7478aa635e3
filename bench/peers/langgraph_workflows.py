"""LangGraph's row of bench/workflows.py (bench/.venvs/langgraph): a StateGraph of five
nodes, each calling a FakeListChatModel once (sync: the sync SqliteSaver) (langchain-core's scripted model); fan-in
through ``add_edge(["a", "b"], "join")``. In memory (InMemorySaver) or with SqliteSaver
(one thread per invocation, durability="sync"); bytes: checkpoints + metadata + writes."""

from __future__ import annotations

import operator
import sqlite3
from importlib.metadata import version
from typing import Annotated, Any, TypedDict

from _workflow_harness import NODES, PROMPT, args, measure, reply
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    messages: Annotated[list[dict[str, str]], operator.add]


def node(name: str) -> Any:
    model = FakeListChatModel(responses=[reply(name)])

    def run(state: State) -> dict[str, Any]:
        answer = model.invoke([("user", PROMPT)])
        return {"messages": [{"role": "assistant", "name": name, "content": str(answer.content)}]}

    return run


def main() -> None:
    ns = args()
    builder = StateGraph(State)
    for name in NODES:
        builder.add_node(name, node(name))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "a")
    builder.add_edge("plan", "b")
    builder.add_edge(["a", "b"], "join")
    builder.add_edge("join", "final")
    builder.add_edge("final", END)
    if ns.mode == "sqlite":
        conn = sqlite3.connect(ns.db, check_same_thread=False)
        saver: Any = SqliteSaver(conn)
    else:
        saver = InMemorySaver()
    graph = builder.compile(checkpointer=saver)

    async def invoke(i: int) -> Any:  # sync nodes and invoke: SqliteSaver is sync-only
        config = {"configurable": {"thread_id": f"t-{i}"}}
        return graph.invoke(
            {"messages": [{"role": "user", "content": PROMPT}]}, config, durability="sync"
        )

    def check(out: Any) -> None:
        assert out["messages"][-1]["content"] == reply("final"), out

    def size() -> int:
        total = 0
        for query in (
            "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints",
            "SELECT SUM(LENGTH(value)) FROM writes",
        ):
            (value,) = conn.execute(query).fetchone()
            total += int(value or 0)
        return total

    measure(
        invoke,
        ns,
        "langgraph",
        f"langgraph {version('langgraph')}",
        size if ns.mode == "sqlite" else None,
        check,
    )


if __name__ == "__main__":
    main()
