"""RemoteAgent: a remote A2A agent as a tool, under the calling agent's policy.

It is a plain :class:`~tether.tools.base.Tool` (BeforeToolCall, interventions,
AGENT-HOOKS, limits, budget and audit apply to its calls like to any tool's). A call
sends the task text as one A2A message and ends when the remote task does.

Exactly once: the loop journals the call's intent (fsync'd: the tool is not idempotent)
before the body runs; the body journals a note before it sends and the remote task id as
soon as it is known (``remote_journal.py``), with an A2A ``context_id`` derived from the
session and the call. A re-run (after an answer, or after a crash: ``reconcile`` lets a
recovered call re-run, since the notes say whether it was sent) reattaches to the task
by its id, or finds it by that context id, and never sends the task twice; when the
remote cannot be asked then, the call is in doubt and waits for a human (``in_doubt``).

A remote ``input-required`` is an interrupt of the caller at ``<tool>#<call id>/<remote
question id>``; its answer goes back to the remote task as a message whose data part maps
the remote question ids to the answers.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any

from tether.a2a.remote_card import RemoteCard, card_url, fetch_card, fetch_card_sync
from tether.a2a.remote_errors import RemoteAgentError
from tether.a2a.remote_journal import (
    call_key,
    drop_note,
    note_of,
    remote_context_id,
    write_note,
)
from tether.a2a.remote_task import Question, answer_of, questions_of, state_of
from tether.agents.addresses import SEPARATOR, step
from tether.control.interrupts import Interrupt, InterruptSignal, interrupt_id
from tether.errors import ConfigurationError
from tether.journal_fold import IN_DOUBT
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import Message, Task

    from tether.a2a.remote_client import Remote
    from tether.messages import ToolCall

IN_DOUBT_REMOTE = (
    "tether lost this call to a remote agent in a crash after it may have sent the task, "
    "and cannot ask the remote agent now whether it did. Answer 'retry' to look for the "
    'task again (it is never sent twice when found), {"skip": <result>} to use a result '
    "you give, or 'abort' to stop the run."
)
MAX_ROUNDS = 100
"""Answers forwarded to one remote task at most (each round a human answered)."""
ANSWER_LANDS = 10.0
"""Seconds an answer sent before a crash is given to reach the remote before it is resent
(the remote still asking the same question means it never got it)."""


class RemoteAgent(Tool):
    """A remote A2A agent (at ``url``: its base URL or its card's) as a tool of an agent.

    The model calls it with ``task``, the text sent to the remote agent; the result is
    the remote task's answer. ``token``: a bearer token sent with every request.
    ``name`` / ``description``: the tool's, else the card's (then the card is fetched
    here, bounded to 64 KiB and 10 s; its text is cleaned and cut). ``timeout``: seconds
    one call may take in all, questions to humans aside (None: no limit but each
    request's 30 s).
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        name: str | None = None,
        description: str | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        card_url(url)  # refuses a URL that is not http(s) now
        if token is not None and (not isinstance(token, str) or not token.strip()):
            raise ConfigurationError("RemoteAgent token must be a non-empty string or None")
        self.url = url
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._card: RemoteCard | None = None
        if name is None or description is None:
            self._card = fetch_card_sync(url, self._headers)
            name = name or self._card.name
            description = description or self._card.description
        self._wait = timeout

        async def delegate(task: str, context: ToolContext) -> str:
            """Args:
            task: The task for the remote agent, with everything it needs to know.
            """
            return await self.call_remote(context, task)

        super().__init__(
            delegate,
            name=name,
            description=description,
            idempotent=False,  # the intent is fsync'd before the body runs
            reconcile=_rerun,
        )

    def __repr__(self) -> str:
        return f"RemoteAgent({self.url!r}, name={self.name!r})"

    async def card(self) -> RemoteCard:
        """The remote's card (fetched once, on the first call that needs it)."""
        if self._card is None:
            self._card = await fetch_card(self.url, self._headers)
        return self._card

    async def call_remote(self, context: ToolContext, text: str) -> str:
        """Send ``text`` as a new remote task, or reattach to the call's task; its answer."""
        from tether.a2a.remote_client import Remote, Unreachable

        key = call_key(context)
        cid = remote_context_id(context.agent.session_id, self.name, key)
        note = note_of(context)
        try:
            card = await self.card()
        except RemoteAgentError:
            if note is None:
                raise
            raise InterruptSignal(_in_doubt(context)) from None
        async with Remote(card, self._headers) as remote:
            try:
                async with asyncio.timeout(self._wait):
                    task = await self._task(remote, context, note, cid, text)
                    return await self._settle(remote, context, task, cid)
            except TimeoutError:
                task_id = (note_of(context) or {}).get("task")
                if isinstance(task_id, str):
                    await remote.cancel(task_id)
                drop_note(context)
                raise RemoteAgentError(
                    f"the remote agent {self.name!r} did not finish within {self._wait:g} s"
                    + (f" (asked it to cancel task {task_id})" if isinstance(task_id, str) else "")
                ) from None
            except Unreachable as exc:
                if not exc.sent and note is None:  # nothing reached the remote: say so
                    drop_note(context)
                    raise RemoteAgentError(
                        f"could not reach the remote agent {self.name!r}: {exc}"
                    ) from None
                raise InterruptSignal(_in_doubt(context)) from None
            except RemoteAgentError:
                drop_note(context)  # the remote answered: the call ends here, for good
                raise
            except asyncio.CancelledError:
                if context.cancel.cancelled:  # the caller's run was cancelled: so is the task
                    task_id = (note_of(context) or {}).get("task")
                    if isinstance(task_id, str):
                        await asyncio.shield(remote.cancel(task_id))
                    drop_note(context)
                raise

    async def _task(
        self, remote: Remote, context: ToolContext, note: dict[str, Any] | None, cid: str, text: str
    ) -> Task | Message:
        """The call's remote task: the one the notes find, else a new one (sent once)."""
        if note is not None:
            task_id = note.get("task")
            if isinstance(task_id, str):
                return await remote.get(task_id)
            found = await remote.find(cid)  # sent before the crash, id not journaled yet?
            if found is not None:
                await write_note(context, {"context": cid, "task": found.id})
                return found
        else:
            await write_note(context, {"context": cid})
        from a2a.helpers.proto_helpers import new_text_part
        from a2a.types.a2a_pb2 import Message, Role

        message = Message(
            message_id=_message_id(cid, "task"),
            context_id=cid,
            role=Role.ROLE_USER,
            parts=[new_text_part(text)],
        )

        async def known(task_id: str) -> None:
            await write_note(context, {"context": cid, "task": task_id})

        return await remote.send(message, known)

    async def _settle(
        self, remote: Remote, context: ToolContext, task: Task | Message, cid: str
    ) -> str:
        """Follow the task to its end, asking the caller's humans what it asks."""
        from a2a.types.a2a_pb2 import Message

        if isinstance(task, Message):  # the remote answered at once, with no task
            drop_note(context)
            from tether.a2a.remote_task import message_text

            return message_text(task)
        for _ in range(MAX_ROUNDS):
            task = await remote.wait(task)
            state = state_of(task)
            if state == "completed":
                drop_note(context)
                return answer_of(task)
            # failed, rejected, canceled, auth-required (tether cannot sign in), or unnamed
            if state != "input-required":
                drop_note(context)
                raise RemoteAgentError(_ended(self.name, task, state))
            task = await self._answer(remote, context, task, cid)
        drop_note(context)
        raise RemoteAgentError(
            f"the remote agent {self.name!r} asked more than {MAX_ROUNDS} questions on task "
            f"{task.id}; stopped"
        )

    async def _answer(self, remote: Remote, context: ToolContext, task: Task, cid: str) -> Task:
        """Forward the caller's answers to an input-required task (or raise its questions)."""
        status_id = task.status.message.message_id if task.status.HasField("message") else ""
        asked = questions_of(task)
        lifted = [self._lift(context, q, status_id, task) for q in asked]
        answers = context.agent.conversation.answers
        missing = [i for i in lifted if i.id not in answers]
        if missing:
            raise InterruptSignal(*missing)
        note = note_of(context) or {"context": cid, "task": task.id}
        round_key = status_id or str(task.status.timestamp.seconds)
        if note.get("answered") == round_key:  # sent before a crash: wait for it to land
            moved = await _moved_on(remote, task, status_id)
            if moved is not None:
                return moved
            # still the same question after a while: the answer never reached it; resend
        await write_note(context, {**note, "task": task.id, "answered": round_key})
        from a2a.helpers.proto_helpers import new_data_part
        from a2a.types.a2a_pb2 import Message, Role

        reply = Message(
            message_id=_message_id(cid, f"answer/{round_key}"),
            context_id=cid,
            task_id=task.id,
            role=Role.ROLE_USER,
            parts=[
                new_data_part({q.id: answers[i.id] for q, i in zip(asked, lifted, strict=True)})
            ],
        )

        async def known(task_id: str) -> None:
            return None

        sent = await remote.send(reply, known)
        return sent if not isinstance(sent, Message) else await remote.get(task.id)

    def _lift(
        self, context: ToolContext, question: Question, status_id: str, task: Task
    ) -> Interrupt:
        call = context.tool_call
        run = context.agent.conversation.run
        position = run.batch_position if run is not None else 0
        where = step(self.name, call.id)
        reason: Any = question.reason
        if isinstance(reason, dict):
            reason = {**reason, "remote_agent": self.name, "remote_task": task.id}
        return Interrupt(
            id=interrupt_id(
                f"remote{SEPARATOR}{self.name}",
                position,
                call.id,
                f"{status_id}{SEPARATOR}{question.id}",
                context.agent.session_id,
            ),
            name=f"{where}{SEPARATOR}{question.name}",
            reason=reason,
            source="tool",
            point=f"{where}{SEPARATOR}{question.id}",
            tool_call=call,
        )


def _rerun(call: ToolCall) -> None:
    """After a crash: re-run the call (None); its notes make the re-run reattach to the
    remote task, or ask a human when the remote cannot be asked."""
    return None


def _in_doubt(context: ToolContext) -> Interrupt:
    """The in-doubt interrupt settle_in_doubt would raise for this call (same id, so the
    human's retry / skip / abort is applied by the resume like any in-doubt answer)."""
    call = context.tool_call
    run = context.agent.conversation.run
    position = run.batch_position if run is not None else 0
    iid = interrupt_id(IN_DOUBT, position, call.id, IN_DOUBT, context.agent.session_id)
    return Interrupt(iid, IN_DOUBT, IN_DOUBT_REMOTE, "in_doubt", IN_DOUBT, call)


async def _moved_on(remote: Remote, task: Task, status_id: str) -> Task | None:
    """The task once it no longer asks the question of ``status_id`` (None: it still
    does after :data:`ANSWER_LANDS` seconds)."""
    delay = 0.05
    try:
        async with asyncio.timeout(ANSWER_LANDS):
            while True:
                task = await remote.get(task.id)
                asking = task.status.message.message_id if task.status.HasField("message") else ""
                if state_of(task) != "input-required" or asking != status_id:
                    return task
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
    except TimeoutError:
        return None


def _message_id(context_id: str, what: str) -> str:
    """A deterministic A2A message id (a remote that deduplicates by it sees one message)."""
    return "tether-" + hashlib.sha256(f"{context_id}\x00{what}".encode()).hexdigest()[:32]


def _ended(name: str, task: Task, state: str) -> str:
    from tether.a2a.remote_task import message_text

    said = message_text(task.status.message, 2_000) if task.status.HasField("message") else ""
    return f"the remote agent {name!r} ended task {task.id} {state}" + (f": {said}" if said else "")
