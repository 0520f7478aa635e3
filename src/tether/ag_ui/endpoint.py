"""``POST /ag-ui``: the ``--app`` agent served over AG-UI 1.0 (a RunAgentInput in, a
Server-Sent Events stream of AG-UI events out).

The thread id is the session id. Everything that can refuse the input is decided before
the stream starts, so a refusal is an HTTP error and nothing runs: the token (401/403),
the body (400, 413 past the server's cap), resume entries naming interrupts the thread
does not wait on (400), answers the caller may not give (403), a thread that is busy or
waits on interrupts nobody answered (409). A run that fails once started ends the stream
with RUN_ERROR.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from ag_ui.core import (
    BaseEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    TokenUsage,
)
from starlette.exceptions import HTTPException
from starlette.responses import StreamingResponse

from tether.ag_ui.access import OWNER_EVENT, invoker, may_answer, not_owner, thread_owner
from tether.ag_ui.events import EventMapper
from tether.ag_ui.frontend import frontend_tools
from tether.ag_ui.input import new_user_messages, read_input, tool_results
from tether.ag_ui.interrupts import answers, is_frontend, to_ag_ui
from tether.ag_ui.logs import logged
from tether.ag_ui.pump import Pump, Raised
from tether.durable.errors import CorruptEntry, SessionBusy, StoreError
from tether.errors import AgentBusyError, AnswerError, ConfigurationError, SessionStateError
from tether.events import FinalResult, StreamEvent
from tether.governance.masks import Masker, redact_text
from tether.governance.redaction import interrupt_redactor, redactor_of
from tether.ops.app_loader import AppFactory
from tether.ops.server.request_input import read_body

if TYPE_CHECKING:
    from ag_ui.core import RunAgentInput
    from starlette.requests import Request

    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.durable import Store
    from tether.ops.app_loader import Factory
    from tether.ops.server.auth import Policy
    from tether.ops.server.offload import StoreRunner
    from tether.result import Result

log = logging.getLogger("tether.server")

PROTOCOL: Final = "1.0"
SSE_HEADERS: Final = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Accel-Buffering": "no",
}
MAX_ERROR: Final = 2000


class AgUiEndpoint:
    """The handler of ``POST /ag-ui`` for one server (its store, policy and factory)."""

    def __init__(self, run: StoreRunner, policy: Policy, factory: Factory) -> None:
        self.run = run
        self.policy = policy
        self.factory = AppFactory.of(factory)

    @property
    def store(self) -> Store:
        return self.run.store

    async def handle(self, request: Request) -> StreamingResponse:
        """Answer one RunAgentInput (see the module)."""
        approver = await invoker(request, self.run)
        run = read_input(await read_body(request))
        exists, pending = await self._pending(run.thread_id)
        owner = await thread_owner(self.run, run.thread_id) if exists else approver.name
        owns = owner == approver.name or "admin" in approver.roles
        agent = await self._build(run.thread_id)
        try:
            if agent.session_id != run.thread_id:
                raise HTTPException(
                    500, "the --app factory built an agent for another session than asked"
                )
            if agent.store is None:
                raise HTTPException(
                    500,
                    "the --app factory built an agent without a store: an AG-UI thread is a "
                    "durable session; give the agent the server's store",
                )
            try:
                extra = frontend_tools(run.tools, {t.name for t in agent.tools})
            except ConfigurationError as exc:
                raise HTTPException(400, str(exc)) from None
            except ImportError as exc:  # jsonschema / regex: pyproject's ag-ui extra lacks them
                raise HTTPException(
                    500,
                    f"front-end tools need the JSON-schema validation tether[mcp] installs "
                    f"({exc.name} is missing): pip install 'tether[mcp]'",
                ) from None
            if extra:
                agent.tools = [*agent.tools, *extra]  # type: ignore[misc]  # __setattr__ rebuilds
            events = await self._events(agent, run, pending, approver, owns, owner)
            await self.run(
                self.store.audit.append,
                OWNER_EVENT,
                {"approver": approver.name, "run_id": run.run_id[:200]},
                session_id=run.thread_id,
            )
        except BaseException:
            await asyncio.to_thread(agent.close)
            raise
        pump = Pump(events, agent.cancel, lambda: asyncio.to_thread(agent.close))
        try:
            first = await _first(pump)
        except BaseException:
            pump.detach()  # a refusal: the run is over already; a request cancelled: cancel it
            raise
        body = self._sse(agent, run, first, pump)
        return StreamingResponse(body, media_type="text/event-stream", headers=SSE_HEADERS)

    async def _build(self, thread: str) -> Agent:
        """The thread's agent from the factory (in a thread: a factory may block); a
        failing factory is a 500 naming it, its message redacted."""
        try:
            return await asyncio.to_thread(self.factory.build, thread)
        except Exception as exc:
            log.error("the --app factory failed for thread %s: %s", logged(thread), logged(exc))
            detail = redact_text(f"{type(exc).__name__}: {exc}")[:MAX_ERROR]
            raise HTTPException(
                500,
                f"the --app factory could not build the agent of thread {thread[:80]!r}: {detail}",
            ) from None

    async def _pending(self, thread: str) -> tuple[bool, dict[str, Interrupt]]:
        """Whether the thread's session exists, and the interrupts it waits on (422: its
        journal cannot be read, as the sessions API says)."""
        from tether.session import fold

        try:
            record = await self.run(self.store.load, thread)
            if record is None:
                return False, {}
            view = fold(record)
        except (CorruptEntry, KeyError, ValueError, TypeError) as exc:
            raise HTTPException(
                422,
                f"thread {thread[:80]!r} has a journal entry tether cannot read "
                f"({type(exc).__name__}); it cannot be continued until the entry is repaired",
            ) from None
        if view.suspension is None:
            return True, {}
        return True, {i.id: i for i in view.suspension.interrupts if i.id not in view.answers}

    async def _events(
        self,
        agent: Agent,
        run: RunAgentInput,
        pending: dict[str, Interrupt],
        approver: Any,
        owns: bool,
        owner: str | None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """The run the input asks for (a new turn, or the suspended run continued)."""
        try:
            given = answers(run.resume or [], pending)
        except AnswerError as exc:
            raise HTTPException(400, str(exc)) from None
        results = tool_results(run)
        for iid, interrupt in pending.items():
            call = interrupt.tool_call
            if is_frontend(interrupt) and call is not None and call.id in results:
                given[iid] = results[call.id]
        if not pending:
            if not owns:
                raise HTTPException(403, not_owner(approver, run.thread_id, owner))
            return agent.stream(new_user_messages(run))
        if not given:
            raise HTTPException(
                409,
                f"thread {run.thread_id[:80]!r} waits on {len(pending)} interrupt(s) "
                f"({', '.join(sorted(pending))}): continue it with resume entries (or tool "
                "messages for its pending front-end tool calls)",
            )
        rows = await self._rows(run.thread_id)
        for iid in given:
            if not owns and pending[iid].source == "tool":
                raise HTTPException(403, not_owner(approver, run.thread_id, owner))
            refusal = may_answer(approver, pending[iid], rows.get(iid), self.policy)
            if refusal is not None:
                raise HTTPException(403, refusal)
        return agent.resume_stream(given, decided_by=f"{approver.name} (ag-ui)")

    async def _rows(self, thread: str) -> dict[str, Any]:
        rows = await self.run(self.store.approvals.find, session_id=thread, limit=10_000)
        return {row.interrupt_id: row for row in rows}  # oldest first: the newest wins

    async def _sse(
        self,
        agent: Agent,
        run: RunAgentInput,
        first: StreamEvent | Raised | None,
        pump: Pump,
    ) -> AsyncIterator[str]:
        redactor = redactor_of(agent)
        masker = Masker(redactor, {}, agent.runtime.hidden)
        mapper = EventMapper(run.run_id[:200], masker)
        reading = True  # False once the run is over: nothing to cancel when we stop
        try:
            yield _sse(
                RunStartedEvent(
                    thread_id=run.thread_id, run_id=run.run_id, protocol_version=PROTOCOL
                )
            )
            yield _sse(mapper.state(agent.state))
            item = first
            while True:
                if item is None:
                    raise SessionStateError("the run ended without a result")
                if isinstance(item, Raised):
                    raise item.error
                if isinstance(item, FinalResult):
                    reading = False
                    for out in await self._finish(agent, run, mapper, masker, item.result):
                        yield _sse(out)
                    return
                for out in mapper.map(item):
                    yield _sse(out)
                item = await pump.next()
        except Exception as exc:
            reading = False
            log.warning(
                "ag-ui run %s of thread %s failed: %s",
                logged(run.run_id),
                logged(run.thread_id),
                logged(exc),
            )
            for out in mapper.close([]):
                yield _sse(out)
            message = masker.scrub(str(exc) or type(exc).__name__)[:MAX_ERROR]
            yield _sse(RunErrorEvent(message=message, code=type(exc).__name__))
        finally:
            if reading:  # the client went away mid-run: cancel it, let it end unread
                pump.detach()

    async def _finish(
        self, agent: Agent, run: RunAgentInput, mapper: EventMapper, masker: Masker, result: Result
    ) -> list[BaseEvent]:
        out = mapper.close(result.interrupts)
        out.append(mapper.state(agent.state))
        value = {
            "text": masker.scrub(result.text),
            "stopReason": result.stop_reason,
            "reason": None if result.reason is None else masker.scrub(str(result.reason)),
        }
        outcome: Any
        if result.stop_reason == "error":
            out.append(RunErrorEvent(message=value["reason"] or "the run failed", code="error"))
            return out
        if result.stop_reason == "cancelled":
            outcome = RunFinishedCancelledOutcome()
        elif result.stop_reason == "interrupt":
            asks = [i for i in result.interrupts if not is_frontend(i)]
            calls = [i.tool_call.id for i in result.interrupts if is_frontend(i) and i.tool_call]
            if asks:
                rows = await self._rows(run.thread_id)
                shown = [
                    to_ag_ui(i, masker, interrupt_redactor(agent, i), rows.get(i.id)) for i in asks
                ]
                outcome = RunFinishedInterruptOutcome(interrupts=shown)
            else:
                outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=calls or None)
        else:
            outcome = RunFinishedSuccessOutcome()
        out.append(
            RunFinishedEvent(
                thread_id=run.thread_id,
                run_id=run.run_id,
                result=value,
                outcome=outcome,
                usage=[_usage(result)] if result.usage.model_calls else None,
            )
        )
        return out


async def _first(pump: Pump) -> StreamEvent | Raised | None:
    """The run's first event, so that what refuses the run is an HTTP error (a run that
    starts and fails is a :class:`Raised`, reported in the stream after RUN_STARTED)."""
    item = await pump.next()
    if not isinstance(item, Raised):
        return item
    exc = item.error
    if isinstance(exc, AnswerError):
        raise HTTPException(400, str(exc))
    if isinstance(exc, AgentBusyError | SessionBusy):
        raise HTTPException(409, f"the thread is busy with another run: {exc}")
    if isinstance(exc, SessionStateError):
        raise HTTPException(409, str(exc))
    if isinstance(exc, StoreError):
        raise exc
    if isinstance(exc, ConfigurationError):
        raise HTTPException(400, str(exc))
    return item


def _usage(result: Result) -> TokenUsage:
    """The run's tokens, sub-agents included, as one entry (the totals)."""
    usage = result.usage
    return TokenUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.input_tokens + usage.output_tokens,
        reasoning_tokens=usage.reasoning_tokens or None,
        cached_input_tokens=usage.cache_read_tokens or None,
        cache_write_input_tokens=usage.cache_write_tokens or None,
    )


def _sse(event: BaseEvent) -> str:
    return f"data: {event.model_dump_json(by_alias=True)}\n\n"
