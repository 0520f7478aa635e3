"""tether runner of bench/temporal.py (the project's python): ``AgentWorkflow`` served by
a Worker with ``TetherPlugin`` (store: a fresh SQLite file), started with
``client.execute_workflow(AgentWorkflow.run, PROMPT, ...)``."""

from __future__ import annotations

import argparse
import tempfile
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import Any

from _temporal_harness import PROMPT, history_counts, measure, run
from temporalio.client import Client
from temporalio.worker import Worker

from tether.durable import SQLiteStore
from tether.temporal import AgentWorkflow, TetherPlugin

APP = "_temporal_tether_app:agent_factory"


async def main(args: argparse.Namespace) -> dict[str, Any]:
    client = await Client.connect(args.address)
    queue, run_id = f"bench-tether-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex[:8]
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "tether.db")
        plugin = TetherPlugin(app=APP, store=store)

        async def invoke(i: int) -> str:
            result = await client.execute_workflow(
                AgentWorkflow.run, PROMPT, id=f"tether-{run_id}-{i}", task_queue=queue
            )
            if result["stop_reason"] != "end_turn":
                raise SystemExit(f"invocation {i} stopped with {result['stop_reason']}")
            return str(result["text"])

        try:
            async with Worker(client, task_queue=queue, plugins=[plugin]):
                timing = await measure(invoke, args.invocations, args.warmup)
        finally:
            await store.close()
    last = f"tether-{run_id}-{args.warmup + args.invocations - 1}"
    return {
        "framework": "tether",
        "temporalio": version("temporalio"),
        "store": "sqlite",
        **timing,
        "history": await history_counts(client, last),
    }


if __name__ == "__main__":
    run(main)
