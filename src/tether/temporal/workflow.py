"""``AgentWorkflow``: a tether agent's run as a Temporal workflow.

The agent the app's factory builds runs here with three things swapped (see
:func:`workflow_agent`): its store is :class:`WorkflowStore` (local activities on the real
store), its model :class:`ActivityModel` and each tool an :class:`ActivityTool`. Its
hooks, interventions, AGENT-HOOKS host, limits, budget and Confirm run in the workflow, so
they must be deterministic (no clock, no randomness, no I/O of their own); the replay
tests check tether's own. A run that stops at interrupts waits for the
:data:`ANSWER_UPDATE` Update (from code, or from the inbox through the worker's
forwarder), whose answers are checked by tether's own rules.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from tether.temporal.progress import Progress

ANSWER_UPDATE: Final = "tether.answer"
"""The Update that answers a waiting run: ``(answers, decided_by=None)``, the shapes
``agent.resume`` takes; it returns the outcome of the resumed run."""
PROGRESS_QUERY: Final = "tether.progress"
"""The Query of a run's progress: ``{"status", "interrupts", "outcome"}``."""
MAX_RECOVERIES: Final = 10
"""Lost tool workers recovered at most, per workflow (each asks a human about its call)."""

_APPS: dict[str, str] = {}
"""Task queue -> the ``module:factory`` its worker's plugin serves (set by the plugin)."""


REPLAYING: Final = "replay-*"
"""The key of the app a Replayer's plugin serves (a Replayer names its own task queue)."""


def serve_app(task_queue: str, app: str) -> None:
    """Say which factory builds the agents of ``task_queue``'s workflows (the plugin does;
    ``REPLAYING`` for a Replayer's)."""
    _APPS[task_queue] = app


def app_of(task_queue: str) -> str | None:
    """The app serving ``task_queue`` (a Replayer's queue is ``replay-<build id>``)."""
    found = _APPS.get(task_queue)
    if found is None and task_queue.startswith("replay-"):
        return _APPS.get(REPLAYING)
    return found


@dataclasses.dataclass
class _Ticket:
    answers: dict[str, Any]
    decided_by: str | None
    done: bool = False
    error: str | None = None
    outcome: dict[str, Any] | None = None


async def workflow_agent(app: str, session_id: str) -> Any:
    """The factory's agent for ``session_id`` with its store, model and tools moved to
    activities (its policy, unchanged, runs here; its tool sources listed by the worker)."""
    from tether.ops.app_loader import build_agent
    from tether.temporal.store_proxy import WorkflowStore
    from tether.temporal.tracing import tracer_for
    from tether.temporal.tree import described, proxied

    built = build_agent(app, session_id)
    sources = await described(built, session_id)
    trace = tracer_for(workflow.info().task_queue)
    store = WorkflowStore(session_id)
    return proxied(built, session_id, store=store, sources=sources, decorate=trace)


@workflow.defn(name="tether.AgentWorkflow", sandboxed=False)
class AgentWorkflow:
    """Run ``prompt`` with the worker's app agent; wait for answers at every interrupt."""

    def __init__(self) -> None:
        self._tickets: list[_Ticket] = []
        self._pending: dict[str, dict[str, Any]] = {}
        self._status = "starting"
        self._outcome: dict[str, Any] | None = None
        self._progress = Progress()

    @workflow.run
    async def run(self, prompt: str, session_id: str | None = None) -> dict[str, Any]:
        from tether.errors import AnswerError, TetherError
        from tether.governance.masks import redact_text
        from tether.temporal.outcome import outcome
        from tether.temporal.tool_proxy import MayHaveRun

        info = workflow.info()
        app = app_of(info.task_queue)
        if app is None:
            raise ApplicationError(
                f"no tether app is served on task queue {info.task_queue!r}: give the "
                "worker TetherPlugin(app=...)",
                non_retryable=True,
            )
        sid = session_id or info.workflow_id
        agent = await workflow_agent(app, sid)
        self._status = "running"
        recoveries = 0
        answers: dict[str, Any] | None = None
        ticket: _Ticket | None = None
        first = True
        while True:
            try:
                if first:
                    events = agent.stream(prompt)
                else:
                    events = agent.resume_stream(
                        answers, decided_by=ticket.decided_by if ticket else None
                    )
                result = await self._drive(events)
            except MayHaveRun:
                recoveries += 1
                if recoveries > MAX_RECOVERIES:
                    raise
                agent = await workflow_agent(app, sid)  # as a new process would: from the journal
                first, answers = False, None  # the answer's ticket waits for this outcome
                continue
            except AnswerError as exc:
                assert ticket is not None
                ticket.error, ticket.done = str(exc), True
                answers, ticket = await self._next_answers()
                continue
            except TetherError as exc:  # the run failed (stop reason error, recorded): once
                self._status = "failed"
                reason = redact_text(f"{type(exc).__name__}: {exc}")
                if ticket is not None:
                    ticket.error, ticket.done = reason, True
                raise ApplicationError(
                    reason, type=type(exc).__name__, non_retryable=True
                ) from None
            first = False
            self._outcome = outcome(result, agent)
            if ticket is not None:
                ticket.outcome, ticket.done = self._outcome, True
            if result.stop_reason != "interrupt" or not result.interrupts:
                self._status = "finished"
                return self._outcome
            self._pending = {item["id"]: item for item in self._outcome["interrupts"]}
            answers, ticket = await self._next_answers()

    async def _drive(self, events: Any) -> Any:
        from tether.running import drive_to_result

        return await drive_to_result(events, (self._progress.record,))

    async def _next_answers(self) -> tuple[dict[str, Any], _Ticket]:
        self._status = "waiting"
        await workflow.wait_condition(lambda: bool(self._tickets))
        ticket = self._tickets.pop(0)
        self._status = "running"
        return ticket.answers, ticket

    @workflow.update(name=ANSWER_UPDATE)
    async def answer(
        self, answers: dict[str, Any], decided_by: str | None = None
    ) -> dict[str, Any]:
        """Answer pending interrupts (id -> answer); returns the resumed run's outcome, or
        fails with the reason tether refused the answers (nothing recorded then)."""
        ticket = _Ticket(dict(answers), decided_by)
        self._tickets.append(ticket)
        await workflow.wait_condition(lambda: ticket.done)
        if ticket.error is not None:
            raise ApplicationError(ticket.error, type="AnswerError", non_retryable=True)
        assert ticket.outcome is not None
        return ticket.outcome

    @answer.validator
    def _check(self, answers: dict[str, Any], decided_by: str | None = None) -> None:
        if self._status != "waiting" or self._tickets:
            raise ApplicationError(f"the run is not waiting for answers (it is {self._status})")
        if not isinstance(answers, dict) or not answers:
            raise ApplicationError("answers must be a non-empty object of interrupt id -> answer")
        unknown = sorted(str(key) for key in answers if key not in self._pending)
        if unknown:
            known = ", ".join(sorted(self._pending)) or "(none)"
            raise ApplicationError(f"no pending interrupt {', '.join(unknown)}; pending: {known}")

    @workflow.query(name=PROGRESS_QUERY)
    def progress(self, since: int = 0) -> dict[str, Any]:
        """Where the run is: ``status`` (running, waiting, finished), the pending
        interrupts (redacted), the last outcome, and the events after ``since`` (see
        :mod:`tether.temporal.progress`; ``seq`` is the last one's number)."""
        return {
            "status": self._status,
            "interrupts": list(self._pending.values()) if self._status == "waiting" else [],
            "outcome": self._outcome,
            "events": self._progress.since(since),
            "seq": self._progress.seq,
        }
