"""How every run ends: settle open calls (or suspend), journal the end, build the Result,
run AfterInvocation. A run the loop ran (:func:`finish`) and a resume that ran nothing
(:func:`end_without_running`) end through the same :func:`_end`."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from tether.control.events import AfterInvocation
from tether.errors import RunError
from tether.events import FinalResult, InterruptRaised, StreamEvent
from tether.journal_fold import IN_DOUBT
from tether.result import Result, StopReason
from tether.run_state import RunState
from tether.session import SessionJournal, SessionView, journal_end
from tether.suspension import Suspension

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef

T = TypeVar("T")


@dataclass(slots=True)
class Outcome:
    """How the run ends. The first failure wins: a later step's error never replaces it."""

    stop_reason: StopReason = "end_turn"
    reason: str | None = None
    failure: RunError | None = None

    def stop(self, stop_reason: StopReason, reason: str | None) -> None:
        self.stop_reason, self.reason = stop_reason, reason

    def fail(self, error: RunError) -> None:
        if self.failure is None:
            self.stop_reason, self.reason, self.failure = "error", str(error), error

    async def guard(self, step: Awaitable[T]) -> T | None:
        """Await one wrap-up step; its RunError ends the run as ``error`` unless one came first."""
        try:
            return await step
        except RunError as exc:
            self.fail(exc)
            return None


async def finish(run: RunState, outcome: Outcome) -> list[StreamEvent]:
    """Wrap the run up: settle open calls (or suspend), journal the end, build the Result,
    run AfterInvocation; then raise the failure, or return the last events to yield."""
    agent = run.agent
    runtime = run.runtime
    conversation = agent.conversation
    events: list[StreamEvent] = []
    if outcome.failure is not None and outcome.reason:  # a provider's text may echo a key
        from tether.governance.masks import provider_text

        outcome.reason = provider_text(outcome.reason, runtime.model)
    if outcome.stop_reason in ("interrupt", "paused"):
        # a call of this run that raised an in_doubt interrupt itself (a RemoteAgent that
        # cannot ask its remote; not one lifted from a child) is in doubt now, as after a
        # crash: the answer settles it on resume
        doubted = [i.tool_call.id for i in run.interrupts if i.point == IN_DOUBT and i.tool_call]
        conversation.suspension = Suspension(
            list(run.interrupts), run.pending, run.batch_position, outcome.stop_reason, doubted
        )
        # an in-doubt call a targeted resume held back is still in doubt: its answer
        # (retry / skip / abort) is applied by the next resume, never a plain re-run
        conversation.suspension.in_doubt = [
            i.tool_call.id for i in run.interrupts if i.source == "in_doubt" and i.tool_call
        ]
    else:
        closing = run.close_open_calls(
            _close_status(outcome.stop_reason), outcome.reason or outcome.stop_reason
        )
        if closing is not None:
            appended = await outcome.guard(run.add_message(closing))
            if appended is not None:
                events.append(appended)
    if run.journal is not None:
        view = _view(run, outcome.stop_reason)
        usage = run.usage.to_dict()
        await outcome.guard(
            journal_end(run.journal, view, outcome.stop_reason, outcome.reason, usage)
        )
    result = Result(
        outcome.stop_reason, run.last_assistant, run.usage, run.session_id, outcome.reason
    )
    if outcome.stop_reason == "interrupt":
        result.interrupts = list(run.interrupts)
    elif outcome.stop_reason == "end_turn":
        result.output = run.output
    return [*events, *await _end(agent, result, run.journal, outcome)]


async def end_without_running(
    agent: AgentRef, result: Result, journal: SessionJournal | None
) -> list[StreamEvent]:
    """The end of a resume that ran nothing (answers still missing, or a recovered run
    that had ended): the same end as every run's, so AfterInvocation sees it too."""
    return await _end(agent, result, journal, Outcome(result.stop_reason, result.reason))


async def _end(
    agent: AgentRef, result: Result, journal: SessionJournal | None, outcome: Outcome
) -> list[StreamEvent]:
    """What every way a run ends shares: the Result kept, AfterInvocation, the records
    its hooks queued journaled; then the failure raised, or the last events to yield."""
    conversation = agent.conversation
    conversation.last_result = result
    hooks = agent.runtime.hooks
    if hooks.has(AfterInvocation):
        after = await outcome.guard(hooks.emit(AfterInvocation(agent, result)))
        if after is not None and outcome.failure is None:
            conversation.follow_up = after.resume
        result.stop_reason, result.reason = outcome.stop_reason, outcome.reason
    if journal is not None:  # records queued by AfterInvocation hooks
        await outcome.guard(journal.flush())
        result.stop_reason, result.reason = outcome.stop_reason, outcome.reason
    if outcome.failure is not None:
        outcome.failure.result = result
        raise outcome.failure
    events: list[StreamEvent] = [InterruptRaised(interrupt) for interrupt in result.interrupts]
    events.append(FinalResult(result))
    return events


def _view(run: RunState, stop_reason: StopReason) -> SessionView:
    conversation = run.agent.conversation
    pending = None
    if run.pending is not None:
        pending = (list(run.pending[0]), run.pending[1])
    return SessionView(
        messages=conversation.messages,
        state=conversation.state,
        answers=conversation.answers,
        pending=pending,
        position=run.batch_position,
        interrupts=list(run.interrupts),
        suspended_reason=stop_reason,
        compaction=conversation.compaction,
        system_prompt=conversation.system_prompt,
        system_prompt_known=conversation.system_prompt_known,
    )


def _close_status(stop_reason: StopReason) -> str:
    return "cancelled" if stop_reason in ("cancelled", "paused") else "error"
