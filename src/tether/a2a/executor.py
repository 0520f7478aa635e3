"""Running served tasks: one tether run per task at a time, its events fanned out.

:class:`ServedRuns` starts a task's run (a new session, or ``agent.resume`` with a
caller's answers), keeps it going when the caller goes away, and hands its A2A events to
every subscriber (``SendStreamingMessage``, ``SubscribeToTask``). The agent comes from
the ``--app`` factory (a workflow's ``wf.agent``), one per run, closed when the run ends.
A run's first step is taken while the request waits, so a refused answer (tether's own
checks: an answer that does not fit, a decision an approver made first) is the request's
error and nothing runs. :meth:`ServedRuns.watch` is the served-runs loop: a served task an
operator answered in the inbox or CLI (its session ``ready``, as for ``tether worker``)
is resumed here with ``store.approvals.answers_for``, and its subscribers see it move on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from a2a.types.a2a_pb2 import (
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import InternalError, InvalidParamsError

from tether.a2a import META_KEY
from tether.a2a.states import TERMINAL
from tether.a2a.tasks import load_task, reply_artifact, task_meta
from tether.errors import ConfigurationError, TetherError
from tether.ops.app_loader import AppFactory

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.durable import Store
    from tether.events import StreamEvent
    from tether.ops.app_loader import Factory
    from tether.ops.server.offload import StoreRunner

log = logging.getLogger("tether.a2a")

A2AEvent: TypeAlias = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
POLL: Final = 0.5
"""Seconds between the served-runs loop's looks for tasks answered elsewhere."""
CANCEL_WAIT: Final = 30.0


@dataclass(slots=True)
class ActiveRun:
    """One run of a task in this server: its agent and the events so far."""

    task_id: str
    context_id: str
    agent: Agent
    events: list[A2AEvent] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    runner: asyncio.Task[None] | None = None

    async def publish(self, event: A2AEvent) -> None:
        async with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    async def finish(self) -> None:
        async with self.changed:
            self.done.set()
            self.changed.notify_all()

    async def follow(self) -> AsyncIterator[A2AEvent]:
        """Every event of the run, from its first, until it ends."""
        seen = 0
        while True:
            async with self.changed:
                while seen >= len(self.events) and not self.done.is_set():
                    await self.changed.wait()
                fresh, seen = self.events[seen:], len(self.events)
                over = self.done.is_set()
            for event in fresh:
                yield event
            if over and seen >= len(self.events):
                return


class ServedRuns:
    """The runs of the served tasks of one server (see the module)."""

    def __init__(self, run: StoreRunner, factory: Factory) -> None:
        self.run = run
        self.store: Store = run.store
        self.factory = AppFactory.of(factory)
        self.active: dict[str, ActiveRun] = {}
        self._closed = False
        self._watcher: asyncio.Task[None] | None = None

    # -- starting runs --------------------------------------------------------------------

    async def start(self, task_id: str, context_id: str, caller: str, text: str) -> ActiveRun:
        """A new task: its session (with the A2A metadata), then its first run on ``text``."""
        agent = await self._agent(task_id)  # first: a factory that fails leaves no task
        meta = {META_KEY: {"context_id": context_id, "caller": caller}}
        try:
            await self.run(self.store.create, task_id, metadata=meta)
        except BaseException:
            await asyncio.to_thread(agent.close)
            raise
        return await self._launch(task_id, context_id, agent, agent.stream(text))

    async def resume(
        self, task_id: str, answers: dict[str, Any] | None, decided_by: str | None
    ) -> ActiveRun:
        """Continue a waiting task with ``answers`` (None: a paused one, or answers the
        approval rows already hold)."""
        record = await self.run(self.store.load, task_id)
        meta = None if record is None else task_meta(record)
        context_id = str((meta or {}).get("context_id") or task_id)
        agent = await self._agent(task_id)
        events = agent.resume_stream(answers, decided_by=decided_by)
        return await self._launch(task_id, context_id, agent, events)

    async def _agent(self, task_id: str) -> Agent:
        if self._closed:
            raise InternalError(message="the server is stopping; send the message again later")
        try:
            agent = await asyncio.to_thread(self.factory.build, task_id)
        except Exception as exc:
            log.error("the --app factory failed for task %s: %r", task_id, exc)
            raise InternalError(
                message="the agent could not be built; the server log says why"
            ) from None
        if agent.store is None or agent.session_id != task_id:
            await asyncio.to_thread(agent.close)
            raise ConfigurationError(
                "the --app factory must return an Agent with store=... (the server's "
                f"database) and session_id={task_id!r}: an A2A task is a durable session"
            )
        return agent

    async def _launch(
        self,
        task_id: str,
        context_id: str,
        agent: Agent,
        events: AsyncGenerator[StreamEvent, None],
    ) -> ActiveRun:
        if task_id in self.active:
            await asyncio.to_thread(agent.close)
            raise InvalidParamsError(message=f"task {task_id} is running; wait for it to stop")
        run = ActiveRun(task_id, context_id, agent)
        self.active[task_id] = run
        try:
            first = await anext(events)  # tether's checks of the answers happen here
        except StopAsyncIteration:
            first = None
        except TetherError as exc:
            self.active.pop(task_id, None)
            await events.aclose()
            await asyncio.to_thread(agent.close)
            raise InvalidParamsError(
                message=f"{type(exc).__name__}: {exc}; nothing was run"
            ) from None
        except BaseException:
            self.active.pop(task_id, None)
            await asyncio.to_thread(agent.close)
            raise
        working = TaskStatus(state=TaskState.TASK_STATE_WORKING)
        await run.publish(
            TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=working)
        )
        run.runner = asyncio.create_task(self._drive(run, first, events), name=f"a2a {task_id}")
        return run

    async def _drive(
        self, run: ActiveRun, first: StreamEvent | None, events: AsyncGenerator[StreamEvent, None]
    ) -> None:
        from tether.events import MessageCompleted
        from tether.governance.masks import Masker
        from tether.governance.redaction import redactor_of, show_messages

        replies = sum(1 for m in run.agent.messages if m.role == "assistant" and m.text)
        # the tree's hidden strings too: a node's reply may quote what a child's mask hid
        redactor = redactor_of(run.agent)
        masker = Masker(redactor, {}, run.agent.runtime.hidden)
        try:
            event = first
            while event is not None:
                message = event.message if isinstance(event, MessageCompleted) else None
                if message is not None and message.role == "assistant" and message.text:
                    replies += 1
                    shown = show_messages(run.agent.messages, masker=masker)
                    text = next((m.text for m in reversed(shown) if m.role == "assistant"), "")
                    await run.publish(
                        TaskArtifactUpdateEvent(
                            task_id=run.task_id,
                            context_id=run.context_id,
                            artifact=reply_artifact(replies, text),
                            last_chunk=True,
                        )
                    )
                event = await anext(events, None)
        except Exception as exc:  # the run's own error: the session says failed
            log.warning("task %s: the run stopped with %s", run.task_id, type(exc).__name__)
        finally:
            with contextlib.suppress(Exception):
                await events.aclose()
            try:
                task = await self.run(load_task, self.store, run.task_id, redactor)
                if task is not None:
                    await run.publish(
                        TaskStatusUpdateEvent(
                            task_id=run.task_id, context_id=run.context_id, status=task.status
                        )
                    )
            finally:
                self.active.pop(run.task_id, None)
                await asyncio.to_thread(run.agent.close)
                await run.finish()

    # -- cancel ---------------------------------------------------------------------------

    async def cancel(self, task_id: str, by: str) -> None:
        """Cancel the task: a running one cooperatively (``agent.cancel``), a waiting one by
        closing its session (``cancelled``; its pending approvals denied)."""
        run = self.active.get(task_id)
        if run is not None:
            run.agent.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.done.wait(), CANCEL_WAIT)
            return
        from tether.governance import decide_approval

        await self.run(self.store.set_status, task_id, "cancelled")
        for row in await self.run(self.store.approvals.find, session_id=task_id, status="pending"):
            try:
                await self.run(
                    decide_approval,
                    self.store,
                    row.id,
                    "deny",
                    decided_by=by,
                    note="the A2A task was canceled",
                )
            except TetherError as exc:  # decided meanwhile: the task is closed either way
                log.info("task %s: approval %s left as it is: %s", task_id, row.id, exc)

    # -- the served-runs loop -------------------------------------------------------------

    def watch(self, poll: float = POLL) -> None:
        """Start the served-runs loop (see the module) on the running event loop."""
        if self._watcher is None:
            self._watcher = asyncio.create_task(self._watch(poll), name="a2a served runs")

    async def _watch(self, poll: float) -> None:
        while not self._closed:
            try:
                await self.resume_ready()
            except Exception as exc:  # a store hiccup: log, look again later
                log.warning("the served-runs loop: %r", exc)
            await asyncio.sleep(poll)

    async def resume_ready(self) -> list[str]:
        """Resume the served tasks whose every interrupt was answered elsewhere (the
        inbox, the CLI) or expired; the task ids started."""
        await self.run(self.store.approvals.expire_due)
        started = []
        for summary in await self.run(self.store.list_sessions, status="ready", limit=100):
            sid = summary.session_id
            if task_meta(summary) is None or sid in self.active:
                continue
            answers = await self.run(self.store.approvals.answers_for, sid)
            try:
                await self.resume(sid, answers or None, None)
            except Exception as exc:  # busy (a worker has it) or refused: log, not ours now
                log.info("task %s not resumed here: %s", sid, exc)
                continue
            started.append(sid)
        return started

    async def close(self) -> None:
        """Stop the loop; running tasks are paused (resumable by the next server) and
        waited for."""
        self._closed = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(BaseException):
                await self._watcher
        runs = list(self.active.values())
        for run in runs:
            run.agent.pause()
        if runs:
            await asyncio.wait([asyncio.ensure_future(r.done.wait()) for r in runs], timeout=10)


def is_final(state: int) -> bool:
    """Whether a task in ``state`` is over (its run cannot continue)."""
    return state in TERMINAL
