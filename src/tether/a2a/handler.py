"""The A2A request handler: each JSON-RPC method mapped onto tether sessions.

The SDK's ``DefaultRequestHandler`` keeps each task's state in an in-memory
``ActiveTask`` that an operator's answer in the inbox (a resume outside it) or a restart
would leave behind, and turns an executor's refusal into a failed task; here every read
derives the task from the store (:mod:`tether.a2a.tasks`) and a refused answer is the
request's error with nothing run. The SDK still parses, validates, dispatches and
streams (its JSON-RPC dispatcher and SSE), and its models and errors are the protocol's.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, Iterator
from typing import TYPE_CHECKING, Any, Final

from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.task import apply_history_length
from starlette.exceptions import HTTPException

from tether.a2a.executor import POLL, ActiveRun, ServedRuns, is_final
from tether.a2a.interrupts import answers_in, check_answers
from tether.a2a.states import state_of
from tether.a2a.tasks import SessionTaskStore, load_task, task_meta

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.server.events.event_queue import Event

    from tether.durable import Approval, Store
    from tether.durable.approvers import Approver
    from tether.durable.store import SessionRecord
    from tether.ops.server.auth import Policy

START_ROLES: Final = frozenset({"invoke", "admin"})
TEXT_MAX: Final = 100_000
"""Characters of text one message may carry to the agent."""


def approver_of(context: ServerCallContext) -> Approver:
    """The authenticated caller (the route checked the token before dispatching)."""
    approver = context.state.get("approver")
    if approver is None:  # only a mounting error gets here
        raise HTTPException(401, "a valid bearer token is required")
    return approver  # type: ignore[no-any-return]


@contextlib.contextmanager
def noted(context: ServerCallContext) -> Iterator[None]:
    """A 401/403 raised inside is also noted for the route (routes.py), which answers
    it as HTTP: the SDK's REST dispatcher would turn it into a 500."""
    try:
        yield
    except HTTPException as exc:
        refusals = context.state.get("refusals")
        if isinstance(refusals, list):
            refusals.append(exc)
        raise


class TetherRequestHandler(RequestHandler):
    """The JSON-RPC methods of ``/a2a`` over one store and the ``--app`` runs."""

    def __init__(self, runs: ServedRuns, tasks: SessionTaskStore, policy: Policy) -> None:
        self.run = runs.run
        self.store: Store = runs.store
        self.runs = runs
        self.tasks = tasks
        self.policy = policy

    # -- reading ------------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        task = await self.tasks.get(params.id, context)
        if task is None:
            raise TaskNotFoundError(message=f"no task {params.id[:80]!r} (or not yours)")
        return apply_history_length(task, params)

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        if params.HasField("page_size") and not 1 <= params.page_size <= 100:
            raise InvalidParamsError(message="page_size must be between 1 and 100")
        page = await self.tasks.list(params, context)
        for task in page.tasks:
            if not params.include_artifacts:
                task.ClearField("artifacts")
            task.CopyFrom(apply_history_length(task, params))
        return page

    async def _record(
        self, task_id: str, context: ServerCallContext
    ) -> tuple[SessionRecord, dict[str, Any]]:
        record = await self.run(self.store.load, task_id) if task_id else None
        meta = None if record is None else task_meta(record)
        if record is None or meta is None or not self.tasks.reader(context, meta):
            raise TaskNotFoundError(message=f"no task {task_id[:80]!r} (or not yours)")
        return record, meta

    # -- sending ------------------------------------------------------------------------

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        with noted(context):
            run = await self._send(params, context)
        if not params.configuration.return_immediately:
            await run.done.wait()
        task = await self._task(run.task_id)
        return apply_history_length(task, params.configuration)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        with noted(context):
            run = await self._send(params, context)
        yield await self._task(run.task_id)
        async for event in run.follow():
            yield event

    async def _task(self, task_id: str) -> Task:
        redactor = await self.tasks.redactors(task_id)
        task = await self.run(load_task, self.store, task_id, redactor)
        if task is None:
            raise TaskNotFoundError(message=f"task {task_id} is gone")
        return task

    async def _send(self, params: SendMessageRequest, context: ServerCallContext) -> ActiveRun:
        approver = approver_of(context)
        message = params.message
        if message.task_id:
            return await self._continue(message, approver, context)
        if not START_ROLES & set(approver.roles):
            raise HTTPException(
                403,
                f"approver {approver.name!r} (roles: {', '.join(approver.roles)}) may not "
                "start tasks; it needs the role invoke or admin",
            )
        text = "\n".join(p.text for p in message.parts if p.text)
        if not text.strip():
            raise InvalidParamsError(message="a message that starts a task needs a text part")
        if len(text) > TEXT_MAX:
            raise InvalidParamsError(message=f"the text is longer than {TEXT_MAX} characters")
        task_id = f"a2a-{uuid.uuid4().hex}"
        context_id = message.context_id or uuid.uuid4().hex
        return await self.runs.start(task_id, context_id, approver.name, text)

    async def _continue(
        self, message: Message, approver: Approver, context: ServerCallContext
    ) -> ActiveRun:
        task_id = message.task_id
        record, meta = await self._record(task_id, context)
        if message.context_id and message.context_id != meta.get("context_id"):
            raise InvalidParamsError(
                message=f"context {message.context_id[:80]!r} is not the context of task {task_id}"
            )
        own = meta.get("caller") == approver.name
        if task_id in self.runs.active or record.status in ("running", "ready"):
            raise InvalidParamsError(
                message=f"task {task_id} is working; send the message when it waits for input"
            )
        if record.status != "suspended":
            raise InvalidParamsError(
                message=f"task {task_id} is {record.status}: it cannot be continued; start a "
                f"new task in its context ({meta.get('context_id')}) instead"
            )
        from tether.session import fold

        view = fold(record)
        pending = {i.id: i for i in view.interrupts if i.id not in view.answers}
        answers = answers_in(message)
        if not pending:  # paused: its caller continues it
            if not (own or "admin" in approver.roles):
                raise HTTPException(403, f"task {task_id} is not yours to continue")
            return await self.runs.resume(task_id, None, approver.name)
        if not answers:
            raise InvalidParamsError(
                message=f"task {task_id} waits for answers to {', '.join(sorted(pending))}: "
                "send a data part mapping each interrupt id to its answer"
            )
        rows: dict[str, Approval] = {}
        for row in await self.run(self.store.approvals.find, session_id=task_id, limit=10_000):
            rows[row.interrupt_id] = row  # oldest first: the newest request wins
        check_answers(answers, pending, rows, approver, own=own, policy=self.policy)
        return await self.runs.resume(task_id, answers, approver.name)

    # -- cancel and subscribe -----------------------------------------------------------

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        approver = approver_of(context)
        record, meta = await self._record(params.id, context)
        if meta.get("caller") != approver.name and "admin" not in approver.roles:
            with noted(context):
                raise HTTPException(403, f"task {params.id} is not yours to cancel")
        if is_final(state_of(record.status)):
            raise TaskNotCancelableError(message=f"task {params.id} is already {record.status}")
        await self.runs.cancel(params.id, f"{approver.name} (A2A CancelTask)")
        return await self._task(params.id)

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        record, _ = await self._record(params.id, context)
        if is_final(state_of(record.status)):
            raise UnsupportedOperationError(
                message=f"task {params.id} is {record.status}; read it with GetTask"
            )
        task = await self._task(params.id)
        yield task
        seen: tuple[int, int] = (task.status.state, record.version)
        while True:
            run = self.runs.active.get(params.id)
            if run is not None:
                async for event in run.follow():
                    yield event
            latest = await self.run(self.store.load, params.id, known_version=seen[1])
            if latest is None:
                return
            now = (state_of(latest.status), latest.version)
            if now != seen and run is None:
                task = await self._task(params.id)
                yield TaskStatusUpdateEvent(
                    task_id=task.id, context_id=task.context_id, status=task.status
                )
            seen = now
            if is_final(now[0]):
                return
            await asyncio.sleep(POLL)

    # -- not offered ----------------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError
