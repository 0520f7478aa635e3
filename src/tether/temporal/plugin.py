"""``TetherPlugin``: a temporalio plugin that serves a tether app on a worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.plugin import SimplePlugin
from temporalio.worker import ReplayerConfig, Worker, WorkerConfig

from tether.ops.app_loader import load_factory
from tether.temporal import tracing as traces
from tether.temporal.activities import TetherActivities
from tether.temporal.forwarder import POLL_EVERY, forward_decisions
from tether.temporal.workflow import REPLAYING, AgentWorkflow, serve_app


class TetherPlugin(SimplePlugin):
    """Give it to ``Worker(..., plugins=[TetherPlugin(app="module:factory", store=...)])``
    (or to ``Client.connect``): the worker runs :class:`AgentWorkflow` with the agents
    the factory builds, their store, model and tool activities, and delivers decisions
    made in tether's inbox to the workflows waiting for them.

    ``store``: a tether store, or its URL (``sqlite:///path``, ``postgresql://...``).
    ``tracing``: add temporalio's OpenTelemetry ``TracingInterceptor`` and trace the
    workflows' agents (:mod:`tether.temporal.tracing`); None: when a tracer provider is
    set (``tracer_provider``, else the global one). Give the plugin to the ``Client`` too:
    its ``StartWorkflow`` span is the trace every span of the run joins.
    """

    def __init__(
        self,
        app: str,
        store: Any,
        *,
        forward_every: float = POLL_EVERY,
        tracing: bool | None = None,
        tracer_provider: Any = None,
    ) -> None:
        from tether.temporal import tracing as traces

        if isinstance(store, str):
            from tether.ops.store_url import open_store

            store = open_store(store, create=True)
        self.app = app
        self.store = store
        self.forward_every = forward_every
        self.tether_activities = TetherActivities(load_factory(app), store)
        traces.guard()
        self.tracing = traces.wanted(tracing, tracer_provider)
        self.tracer_provider = tracer_provider
        super().__init__(
            "tether.TetherPlugin",
            activities=self.tether_activities.all(),
            workflows=[AgentWorkflow],
            interceptors=[traces.interceptor(tracer_provider)] if self.tracing else None,
        )

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        config = super().configure_worker(config)
        serve_app(config["task_queue"], self.app)
        traces.serve_tracing(config["task_queue"], self.tracer_provider, self.tracing)
        return config

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        config = super().configure_replayer(config)
        serve_app(REPLAYING, self.app)
        traces.serve_tracing(traces.REPLAYER, self.tracer_provider, self.tracing)
        return config

    async def run_worker(self, worker: Worker, next: Callable[[Worker], Awaitable[None]]) -> None:
        forwarding = asyncio.ensure_future(
            forward_decisions(worker.client, self.store, self.forward_every)
        )
        try:
            await super().run_worker(worker, next)
        finally:
            forwarding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await forwarding
            await self.tether_activities.close()
