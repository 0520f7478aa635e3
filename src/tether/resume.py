"""Resuming a suspended session: validate answers, settle in-doubt calls, continue the run."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from tether.control.interrupts import ConfirmDecision, Interrupt, check_response
from tether.errors import AnswerError, SessionStateError
from tether.events import StreamEvent
from tether.loop import run_invocation
from tether.messages import JSONValue
from tether.persistence import check_in_doubt_answer, settle_in_doubt
from tether.result import Result, RunUsage
from tether.run_end import end_without_running
from tether.session import SessionJournal, SessionView, journal_end, journal_suspend
from tether.suspension import Suspension

if TYPE_CHECKING:
    from tether.running import Running
    from tether.tools.context import CancelSignal


async def resume_events(
    agent: Running,
    responses: dict[str, Any],
    cancel: CancelSignal,
    journal: SessionJournal | None,
    decided_by: str | None = None,
) -> AsyncGenerator[StreamEvent, None]:
    """The events of ``agent.resume(responses)``; the caller holds the agent's lock.
    ``decided_by``: who answered, recorded on the approval rows the answers decide."""
    conversation = agent.conversation
    suspension = _suspension(agent)
    checked = await check_answers(agent, suspension, responses)
    if checked and journal is not None:
        # One record of each decision: the approval rows say what the answers say (and who
        # gave them) before the answers are journaled; a row decided otherwise refuses.
        from tether.governance import decide_answers

        pending = {i.id: i for i in suspension.interrupts}
        await decide_answers(agent, pending, checked, decided_by)
    if checked and journal is not None:
        # The answers commit with the run's next write, before anything re-runs: a
        # non-idempotent call's fsync'd intent (one durable commit, not two), or the
        # suspension / end below (see docs/design.md, "Resume").
        journal.defer("interrupt_answered", {"answers": checked})
        if journal.observer is not None:
            await journal.observer.answered(agent.session_id, checked)
    agent.answers.update(checked)
    if journal is not None:  # asked before, not answered now: their rows stay as they are
        journal.held = frozenset(i.id for i in suspension.interrupts if i.id not in agent.answers)
    ask, aborted = settle_in_doubt(agent, suspension)
    if ask:
        # the calls in doubt, and any question a targeted resume left open before the crash
        held = [i for i in suspension.interrupts if i.source != "in_doubt"]
        ask += [i for i in held if i.id not in agent.answers]
        suspension.interrupts = ask
        suspension.recovered = False  # the suspension is written here
        if journal is not None:  # the suspension, its approvals and audit: all or nothing
            await journal_suspend(journal, ask, "in doubt")
    remaining = [i for i in suspension.interrupts if i.id not in agent.answers]
    # Targeted resume: the answered calls run now; the others are held, still pending.
    if remaining and not suspension.target(agent.answers):
        if journal is not None and journal.observer is not None:  # (idempotent) backfill
            await journal.observer.suspended(agent.session_id, remaining, again=True)
        if journal is not None:  # the answers given so far are acknowledged: fsync them
            await journal.append_many([], durable=True)
        for event in await end_without_running(agent, _still_waiting(agent, remaining), journal):
            yield event
        return
    if _finished(agent, suspension):  # the process died after the final answer was saved
        conversation.suspension = None
        for event in await end_without_running(agent, await _finish(agent, journal), journal):
            yield event
        return
    if aborted:
        suspension.stop_reason = "cancelled"  # the run stops; open calls get error results
    conversation.suspension = None
    events = run_invocation(agent, [], cancel, resume=suspension, journal=journal)
    async with aclosing(events) as stream:
        async for event in stream:
            yield event


def _suspension(agent: Running) -> Suspension:
    suspension = agent.conversation.suspension
    if suspension is None:
        raise SessionStateError(
            f"session {agent.session_id} is not suspended: there is nothing to resume "
            "(resume() continues a run that stopped with 'interrupt' or 'paused', or one "
            "whose process died)"
        )
    return suspension


def _finished(agent: Running, suspension: Suspension) -> bool:
    """Whether a recovered run had already ended: its last message is the final answer.

    (A run paused at a boundary or an interrupt never ends with a final answer.)
    """
    if suspension.pending is not None or suspension.interrupts or not agent.messages:
        return False
    last = agent.messages[-1]
    return last.role == "assistant" and not last.tool_calls


async def _finish(agent: Running, journal: SessionJournal | None) -> Result:
    """Write the end the dead process did not write; the model is not called again."""
    if journal is not None:
        conversation = agent.conversation
        view = SessionView(
            messages=conversation.messages,
            state=conversation.state,
            answers=conversation.answers,
            compaction=conversation.compaction,
            system_prompt=conversation.system_prompt,
            system_prompt_known=conversation.system_prompt_known,
        )
        await journal_end(journal, view, "end_turn", None, RunUsage().to_dict())
    return Result("end_turn", agent.messages[-1], RunUsage(), agent.session_id)


def _still_waiting(agent: Running, remaining: list[Interrupt]) -> Result:
    result = Result("interrupt", None, RunUsage(), agent.session_id)
    result.reason = f"waiting for an answer to {len(remaining)} interrupt(s)"
    result.interrupts = remaining
    return result


async def check_answers(
    agent: Running, suspension: Suspension, responses: dict[str, Any]
) -> dict[str, JSONValue]:
    """Validate ``responses`` against the pending interrupts; raise before anything changes."""
    pending = {i.id: i for i in suspension.interrupts}
    unknown = [key for key in responses if key not in pending]
    if unknown:
        waiting = sorted(i for i in pending if i not in agent.answers)
        raise AnswerError(
            f"unknown interrupt id(s) {unknown} for session {agent.session_id}; "
            f"pending: {waiting or 'none'}"
        )
    checked = {key: check_response(key, value) for key, value in responses.items()}
    for key, value in checked.items():
        interrupt = pending[key]
        check_in_doubt_answer(interrupt, value)
        await _check_confirm_answer(agent, interrupt, value)
    return checked


async def _check_confirm_answer(agent: Running, interrupt: Interrupt, response: JSONValue) -> None:
    """Validate the answer to a Confirm (and any edited tool arguments) before anything runs.

    ``args`` are the arguments the call will run with, exactly: the one edit rule
    (``tether.governance.edits.check_edit``) checks them against the tool's schema (a
    sub-agent's tool for a Confirm lifted from the tree; a person's values strictly) and
    against the policies ahead of the Confirm, which must neither rewrite nor deny them.
    """
    if interrupt.source != "intervention":
        return
    decision = ConfirmDecision.parse(response)
    if decision.args is None:
        return
    from tether.governance.edits import check_edit

    await check_edit(agent, interrupt, decision.args)
