"""A2A tasks derived from tether sessions: the task store is the session store.

A served task is the session whose metadata holds :data:`~tether.a2a.META_KEY`; its
``Task`` is built on every read from the journal and the approval rows (so it survives a
restart, and moves on when an operator answers in the inbox): the state from the session
status, the history from the conversation's user and agent texts, one artifact per agent
reply, and, while it waits, a status message with one data part per pending interrupt
(:mod:`tether.a2a.interrupts`). Everything is shown through the one redaction path
(:func:`tether.governance.redaction.show_session`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from a2a.server.tasks.task_store import TaskStore
from a2a.types.a2a_pb2 import (
    Artifact,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)
from a2a.utils.errors import InvalidParamsError, UnsupportedOperationError
from google.protobuf.struct_pb2 import Value
from google.protobuf.timestamp_pb2 import Timestamp

from tether.a2a import META_KEY
from tether.a2a.interrupts import interrupt_part
from tether.a2a.states import state_of

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext

    from tether.durable import Approval, Store
    from tether.durable.approval_types import Redactor
    from tether.durable.store import SessionRecord
    from tether.ops.server.offload import StoreRunner
    from tether.session import SessionView

Redactors = Callable[[str], Awaitable["Redactor | None"]]
"""``await redactors(session_id)``: the session agent's custom redactor (None: default)."""
Reader = Callable[["ServerCallContext", dict[str, Any]], bool]
"""``reader(context, metadata)``: may this caller read the task with this metadata?"""
LIST_SCAN: Final = 10_000
"""Sessions ListTasks looks through (most recently active first)."""
PAGE_DEFAULT: Final = 50


def task_meta(record: SessionRecord | Any) -> dict[str, Any] | None:
    """The A2A metadata of a session record or summary (None: not a served task)."""
    meta = record.metadata.get(META_KEY) if isinstance(record.metadata, dict) else None
    return meta if isinstance(meta, dict) else None


async def load_task(store: Store, session_id: str, redactor: Redactor | None = None) -> Task | None:
    """The task of ``session_id`` as it stands in ``store`` (None: no such served task)."""
    from tether.governance.redaction import show_session, tree_masks
    from tether.governance.redaction_tree import tree_sessions
    from tether.session import fold

    record = await store.load(session_id)
    if record is None or task_meta(record) is None:
        return None
    view = fold(record)
    approvals = await store.approvals.find(session_id=session_id, limit=10_000)
    tree = tree_masks(await tree_sessions(store, session_id), redactor)
    shown = show_session(record, view, approvals, redactor=redactor, tree=tree)
    return build_task(record, shown.view, approvals)


def build_task(record: SessionRecord, view: SessionView, approvals: list[Approval]) -> Task:
    """The Task of a loaded session from its (already redacted) view and its rows."""
    meta = task_meta(record) or {}
    sid = record.session_id
    context_id = str(meta.get("context_id") or sid)
    task = Task(id=sid, context_id=context_id)
    replies = 0
    for index, message in enumerate(view.messages):
        text = message.text
        if message.role not in ("user", "assistant") or not text:
            continue
        role = Role.ROLE_USER if message.role == "user" else Role.ROLE_AGENT
        task.history.append(
            Message(
                message_id=f"{sid}:m{index}",
                context_id=context_id,
                task_id=sid,
                role=role,
                parts=[Part(text=text)],
            )
        )
        if role == Role.ROLE_AGENT:
            replies += 1
            task.artifacts.append(reply_artifact(replies, text))
    task.status.CopyFrom(status_of(record, view, approvals, context_id))
    return task


def reply_artifact(ordinal: int, text: str) -> Artifact:
    """The artifact of the agent's ``ordinal``-th reply of a task (1-based)."""
    return Artifact(artifact_id=f"reply-{ordinal}", name="reply", parts=[Part(text=text)])


def status_of(
    record: SessionRecord, view: SessionView, approvals: list[Approval], context_id: str
) -> TaskStatus:
    """The task's status: its state, when it last changed, and why (waiting: the
    pending interrupts, one data part each)."""
    state = state_of(record.status)
    stamp = Timestamp()
    stamp.FromNanoseconds(int(record.updated_at * 1e9))
    status = TaskStatus(state=state, timestamp=stamp)  # type: ignore[arg-type]
    parts: list[Part] = []
    if state == TaskState.TASK_STATE_INPUT_REQUIRED:
        by_interrupt = {a.interrupt_id: a for a in approvals}
        waiting = [i for i in view.interrupts if i.id not in view.answers]
        if waiting:
            parts.append(Part(text=f"waiting for {len(waiting)} answer(s)"))
            parts.extend(interrupt_part(i, by_interrupt.get(i.id)) for i in waiting)
        else:
            parts.append(Part(text="paused: send a message on this task to continue it"))
    elif state in (TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_COMPLETED):
        reason = last_reason(record)
        if reason:
            parts.append(Part(text=reason))
    if parts:
        status.message.CopyFrom(
            Message(
                message_id=f"{record.session_id}:status{record.version}",
                context_id=context_id,
                task_id=record.session_id,
                role=Role.ROLE_AGENT,
                parts=parts,
            )
        )
    return status


def last_reason(record: SessionRecord) -> str | None:
    """The reason the last run gave for stopping (a limit, a block, an error), if any."""
    from tether.governance.masks import redact_text

    for entry in reversed(record.entries):
        if entry.kind == "status":
            reason = entry.data.get("reason")
            return redact_text(reason) if isinstance(reason, str) and reason else None
    return None


def data_value(data: Any) -> Value:
    """A JSON value as the protobuf ``Value`` a data part holds."""
    value = Value()
    from google.protobuf.json_format import ParseDict

    ParseDict(data, value)
    return value


class SessionTaskStore(TaskStore):
    """The SDK's ``TaskStore`` over tether's store: ``get`` and ``list`` derive tasks from
    the sessions; nothing is saved beside the journal (``save`` records nothing: a task
    changes only by its session's runs), and tasks are never deleted over the protocol."""

    def __init__(self, run: StoreRunner, redactors: Redactors, reader: Reader) -> None:
        self.run = run
        self.store: Store = run.store
        self.redactors = redactors
        self.reader = reader

    async def save(self, task: Task, context: ServerCallContext) -> None:
        return None  # the session journal is the record of a task

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        record = await self.run(self.store.load, task_id)
        meta = None if record is None else task_meta(record)
        if meta is None or not self.reader(context, meta):
            return None  # another caller's task is as unknown as a missing one
        redactor = await self.redactors(task_id)
        return await self.run(load_task, self.store, task_id, redactor)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        size = params.page_size if params.HasField("page_size") else PAGE_DEFAULT
        try:
            offset = int(params.page_token or "0")
        except ValueError:
            raise InvalidParamsError(
                message=f"page_token {params.page_token[:40]!r} is not one this server gave"
            ) from None
        ids: list[str] = []
        for summary in await self.run(self.store.list_sessions, limit=LIST_SCAN):
            meta = task_meta(summary)
            if meta is None or not self.reader(context, meta):
                continue
            if params.context_id and meta.get("context_id") != params.context_id:
                continue
            if params.status and state_of(summary.status) != params.status:
                continue
            ids.append(summary.session_id)
        tasks = []
        for sid in ids[offset : offset + size]:
            redactor = await self.redactors(sid)
            task = await self.run(load_task, self.store, sid, redactor)
            if task is not None:
                tasks.append(task)
        following = offset + size
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=str(following) if following < len(ids) else "",
            page_size=size,
            total_size=len(ids),
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        raise UnsupportedOperationError(message="tasks are sessions; they are not deleted over A2A")
