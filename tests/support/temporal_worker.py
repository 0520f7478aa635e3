"""A Temporal worker process for the crash tests: ``python temporal_worker.py ADDRESS QUEUE
STORE_URL [APP]``; prints "ready" once it polls, runs until killed."""

from __future__ import annotations

import asyncio
import sys


async def main(address: str, queue: str, store: str, app: str) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    from tether.temporal import TetherPlugin

    client = await Client.connect(address)
    plugin = TetherPlugin(app=app, store=store, forward_every=0.1)
    async with Worker(client, task_queue=queue, plugins=[plugin]):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(
        main(args[0], args[1], args[2], args[3] if len(args) > 3 else "temporal_app:agent_factory")
    )
