"""Running: a runtime on a conversation, one invocation at a time (the session skeleton).

Every way to run goes through :meth:`Running._session`: take the lock and (with a store)
the session's lease, run the events (an invocation or a resume) with the follow-ups
AfterInvocation hooks ask for, hand each event to the observers, and close. The
:class:`~tether.agent.Agent` is a ``Running`` whose runtime it builds from its arguments;
a sub-agent call runs a ``Running`` whose runtime is the child's under its parent's
(tether/inheritance.py), so the child Agent object is never changed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from tether._otel import global_tracer_provider
from tether.control.events import AfterInvocation
from tether.conversation import Conversation
from tether.errors import AgentBusyError, InputError, SessionStateError
from tether.events import FinalResult, StreamEvent
from tether.loop import run_invocation
from tether.messages import JSONValue, Message
from tether.prompts import Prompt, output_spec, prompt_messages
from tether.result import Result
from tether.sync_run import run_sync
from tether.tools.context import CancelSignal

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.runtime import Runtime
    from tether.session import SessionJournal

_Start: TypeAlias = Callable[["SessionJournal | None"], AsyncGenerator[StreamEvent, None]]


class Running:
    """An :class:`~tether.agent_ref.AgentRef` with the invoke / stream / resume entry points."""

    runtime: Runtime
    """What this agent's runs run with (read-only: ``Agent`` replaces it only through
    its checked setters; see tether.runtime)."""
    conversation: Conversation
    """The session's state: messages, state, answers, the running run."""
    # Both are plain attributes, not properties: the engine reads them on every step.

    def __init__(self, runtime: Runtime, conversation: Conversation) -> None:
        object.__setattr__(self, "runtime", runtime)
        object.__setattr__(self, "conversation", conversation)
        self._lock = threading.Lock()
        self._cancel = CancelSignal()
        self._tracing_unset = True
        """No run has started yet while a global tracer provider was set (see _open)."""

    # -- the AgentRef ---------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """This agent's name (None: unnamed)."""
        return self.runtime.name

    @property
    def path(self) -> str:
        """This agent's path in an agent tree (``researcher#c1/coder#c4``; ``""`` at the
        top): every hook event carries it as ``event.agent.path``."""
        return self.runtime.path

    @property
    def session_id(self) -> str:
        """The session this agent's conversation belongs to."""
        return self.conversation.session_id

    @property
    def messages(self) -> list[Message]:
        """The conversation so far."""
        return self.conversation.messages

    @property
    def state(self) -> dict[str, Any]:
        """The session state that tools read and write through ``ToolContext.state``."""
        return self.conversation.state

    @property
    def answers(self) -> dict[str, JSONValue]:
        """Answers given to interrupts of this session, by interrupt id."""
        return self.conversation.answers

    @property
    def last_result(self) -> Result | None:
        """The Result of the last invocation or resume (None before the first)."""
        return self.conversation.last_result

    # -- views of the runtime (what hooks and tools read as event.agent.*) ------------

    @property
    def model(self) -> Any:
        """The model (``runtime.model``)."""
        return self.runtime.model

    @property
    def system_prompt(self) -> str | None:
        return self.runtime.system_prompt

    @property
    def tools(self) -> list[Any]:
        """The tools offered now (``runtime.toolset.tools``; refreshed with MCP servers)."""
        return self.runtime.toolset.tools

    @property
    def tool_map(self) -> dict[str, Any]:
        """The tools by name (``runtime.toolset.by_name``)."""
        return self.runtime.toolset.by_name

    @property
    def hooks(self) -> Any:
        """The hook registry (``runtime.hooks``)."""
        return self.runtime.hooks

    @property
    def store(self) -> Any:
        return self.runtime.store

    @property
    def audit_sink(self) -> Any:
        """The audit trail (``runtime.audit``), or None without a store."""
        return self.runtime.audit

    # -- invocation -------------------------------------------------------------------

    def stream(
        self, prompt: Prompt, *, output_type: Any = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """Run one invocation, yielding typed events; the last is ``FinalResult``.

        With ``output_type`` (a pydantic model, dataclass, TypedDict...) the final answer
        is validated into ``Result.output`` (see ``tether.structured``).
        """
        return self._session(lambda: self._invocation(prompt, output_type, watched=True))

    async def invoke_async(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        """Run one invocation and return its Result (raises ``RunError`` on stop reason error).

        ``output_type``: see :meth:`stream`.
        """
        start = self._invocation(prompt, output_type, watched=False)  # a bad prompt raises here
        journal = await self._open()
        try:
            return await drive_to_result(self._events(start, journal), self.runtime.observers)
        finally:
            await self._close(journal)

    def run(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        """Synchronous :meth:`invoke_async` (works inside a running event loop too)."""
        return run_sync(self.invoke_async(prompt, output_type=output_type))

    def resume_stream(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Answer pending interrupts (id -> JSON value) and continue the suspended run.

        Works in the same process or, with a store, in a new one
        (``Agent(..., store=..., session_id=X).resume(...)``); ``resume()`` with no
        answers also recovers a session whose process died. Unknown ids, a session
        that is not suspended, and non-JSON answers are errors that change nothing.
        Ids left unanswered stay pending (the result is again ``interrupt``). Only
        the interrupted calls re-run; the model is not called again for that turn.
        ``output_type``: the invocation's output type (needed again in a new process).
        ``decided_by``: who answered, recorded on the approval rows the answers decide
        (default ``user@host (agent.resume)``); an answer to a row the inbox decided
        otherwise is refused.
        """

        def prepare() -> _Start:
            spec = output_spec(output_type)

            def start(journal: SessionJournal | None) -> AsyncGenerator[StreamEvent, None]:
                from tether.resume import resume_events

                if spec is not None:
                    self.conversation.output_spec = spec
                self.conversation.follow_up = None
                return resume_events(self, responses or {}, self._cancel, journal, decided_by)

            return start

        return self._session(prepare)

    async def resume_async(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> Result:
        """:meth:`resume_stream` driven to its Result."""
        return await drive_to_result(
            self.resume_stream(responses, output_type=output_type, decided_by=decided_by), ()
        )

    def resume(
        self,
        responses: dict[str, Any] | None = None,
        *,
        output_type: Any = None,
        decided_by: str | None = None,
    ) -> Result:
        """Synchronous :meth:`resume_async`."""
        return run_sync(
            self.resume_async(responses, output_type=output_type, decided_by=decided_by)
        )

    # -- the session skeleton ------------------------------------------------------------

    def _invocation(self, prompt: Prompt, output_type: Any, *, watched: bool) -> _Start:
        messages = prompt_messages(prompt)
        spec = output_spec(output_type)

        def start(journal: SessionJournal | None) -> AsyncGenerator[StreamEvent, None]:
            self._refuse_if_suspended()
            self.conversation.follow_up = None
            self.conversation.output_spec = spec
            new = messages if spec is None else [*messages, spec.instruction()]
            return run_invocation(self, new, self._cancel, journal=journal, watched=watched)

        return start

    async def _session(self, prepare: Callable[[], _Start]) -> AsyncGenerator[StreamEvent, None]:
        """The one skeleton: check the arguments (``prepare``), open, run the events it
        starts (and the follow-ups AfterInvocation hooks ask for), observe each event,
        close; every run ends through run_end._end, so AfterInvocation always runs."""
        start = prepare()
        journal = await self._open()
        try:
            events = start(journal)
            if self.runtime.hooks.has(AfterInvocation):
                from tether.follow_up import follow_ups

                events = follow_ups(self, events, self._cancel, journal, prompt_messages)
            observers = self.runtime.observers
            async with contextlib.aclosing(events) as stream:
                if observers:
                    async for event in stream:
                        for observe in observers:
                            observe(event)
                        yield event
                else:
                    async for event in stream:
                        yield event
        finally:
            await self._close(journal)

    def _events(
        self, start: _Start, journal: SessionJournal | None
    ) -> AsyncGenerator[StreamEvent, None]:
        """The run's events, then the invocations AfterInvocation hooks ask for; every run
        ends through run_end._end, so AfterInvocation always runs."""
        events = start(journal)
        if self.runtime.hooks.has(AfterInvocation):
            from tether.follow_up import follow_ups

            events = follow_ups(self, events, self._cancel, journal, prompt_messages)
        return events

    async def _open(self) -> SessionJournal | None:
        """Take the lock and, with a store, the session's lease and latest state."""
        if not self._lock.acquire(blocking=False):
            raise AgentBusyError(
                f"agent (session {self.session_id}) is already running an invocation; an agent runs "
                "one invocation at a time: wait for it to finish, or use another Agent for parallel work"
            )
        # a signal per run: a late cancel() of the last run cannot stop this one (set
        # without the Agent's __setattr__, which guards its public configuration)
        object.__setattr__(self, "_cancel", CancelSignal())
        try:
            # Tracing follows the provider at run time, not at construction (design.md
            # §11): one flag test per run once decided, a dict lookup while OTel is absent.
            if self._tracing_unset and global_tracer_provider() is not None:
                self._tracing_unset = False
                from tether.observe.auto import auto_instrument

                auto_instrument(self)
            if self.runtime.store is None:
                return None
            from tether.persistence import open_session

            return await open_session(self)
        except BaseException:
            self._lock.release()
            raise

    async def _close(self, journal: SessionJournal | None) -> None:
        try:
            if journal is not None:
                from tether.persistence import close_session

                await close_session(self, journal)
        finally:
            self._lock.release()

    def _refuse_if_suspended(self) -> None:
        pending = self.conversation.suspension
        if pending is not None:
            raise SessionStateError(
                f"session {self.session_id} is suspended ({pending.stop_reason}, "
                f"{len(pending.interrupts)} interrupt(s) pending): call agent.resume(...) to "
                "continue it, or agent.reset() to start a new conversation"
            )

    # -- control from any thread ---------------------------------------------------------

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts waiting for an answer (empty unless the session is suspended)."""
        suspension = self.conversation.suspension
        if suspension is None:
            return []
        return [i for i in suspension.interrupts if i.id not in self.answers]

    def pause(self) -> None:
        """Stop the running invocation at the next boundary with stop reason ``paused``.

        Thread-safe; a paused session continues with ``agent.resume()``.
        """
        run = self.conversation.run
        if run is not None:
            run.paused = True

    def steer(self, text: str) -> None:
        """Add guidance to the running invocation without stopping it (thread-safe).

        Delivered at the next boundary, before the next model call (after the tool
        results of the current batch), as a user message: journaled like any message
        and announced by a ``Steered`` stream event. Given between invocations, it
        joins the next one before its first model call.
        """
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"agent.steer() takes a non-empty str, got {text!r}")
        self.conversation.steering.append(text)

    def cancel(self) -> None:
        """Stop the running invocation at the next check (thread-safe, idempotent).

        Checked before each model call and each tool; running async tools are
        cancelled, running sync tools see ``ToolContext.cancel``; unanswered tool
        calls get a "cancelled" result. Stop reason: ``cancelled``.
        """
        self._cancel.set()
        run = self.conversation.run
        if run is not None:
            with contextlib.suppress(RuntimeError):  # a closed loop means the run is over
                run.loop.call_soon_threadsafe(run.cancel_tasks)


async def drive_to_result(
    events: AsyncGenerator[StreamEvent, None], observers: Sequence[Callable[[Any], None]]
) -> Result:
    """Drive ``events`` to their FinalResult, handing each to the observers (closing
    them whatever happens); the Result. One driver for every caller that needs only
    the end of a stream (``invoke``, ``resume``, a Temporal workflow)."""
    result: Result | None = None
    try:
        async for event in events:
            for observe in observers:
                observe(event)
            if type(event) is FinalResult:
                result = event.result
    finally:
        await events.aclose()
    assert result is not None
    return result
