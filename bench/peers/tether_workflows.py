"""tether's row of bench/workflows.py (the project's venv): a tether Graph of five
ScriptedModel agents; in memory, or each invocation a new session in one SQLite file."""

from __future__ import annotations

import sqlite3
from importlib.metadata import version
from typing import Any

from _workflow_harness import EDGES, NODES, PROMPT, args, measure, reply

from tether import Agent
from tether.durable import SQLiteStore
from tether.models import ScriptedModel
from tether.workflows import Graph


def build(store: Any, session_id: str | None) -> Graph:
    graph = Graph(store=store, session_id=session_id, name="notes")
    for node in NODES:
        text = reply(node)
        graph.add_node(node, Agent(ScriptedModel(lambda m, s, t=text: t), name=node))
    for source, target in EDGES:
        graph.add_edge(source, target)
    graph.set_entry("plan")
    return graph


def main() -> None:
    ns = args()
    store = SQLiteStore(ns.db) if ns.mode == "sqlite" else None
    graph = build(store, None)  # built once; each invocation a new session (reset)

    async def invoke(i: int) -> Any:
        graph.agent.reset()
        return await graph.invoke_async(PROMPT)

    def check(result: Any) -> None:
        assert result.stop_reason == "end_turn", result
        assert result.text == reply("final")

    def size() -> int:
        with sqlite3.connect(ns.db) as conn:
            (total,) = conn.execute("SELECT SUM(LENGTH(data)) FROM entries").fetchone()
        return int(total)

    measure(
        invoke,
        ns,
        "tether",
        f"tether {version('tether')}",
        size if store is not None else None,
        check,
    )


if __name__ == "__main__":
    main()
