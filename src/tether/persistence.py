"""Opening a durable session for a run, and settling tool calls left in doubt by a crash."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from tether.control.interrupts import Interrupt, interrupt_id
from tether.durable.errors import SessionBusy
from tether.errors import AnswerError, SessionStateError
from tether.messages import JSONValue, ToolCall, ToolResult
from tether.session import IN_DOUBT, SessionJournal, fold
from tether.tools.output import format_tool_output

_RUNNING: dict[tuple[int, str], str] = {}
"""(store object, session id) pairs run by an Agent of this process, with the lease holder."""

if TYPE_CHECKING:
    from tether.running import Running
    from tether.suspension import Suspension

IN_DOUBT_HELP = (
    "the process running this session died after this tool call started and before its "
    "result was saved, so it may or may not have happened. Answer 'retry' to run it again, "
    '{"skip": "<result the model should see>"} if it did happen, or \'abort\' to stop the run.'
)


def _gone_help(name: str) -> str:
    """The in-doubt question for a call whose tool the agent no longer has."""
    return (
        f"tool {name!r} is no longer one of the agent's tools (its source, such as an MCP "
        f"server, stopped offering it); {IN_DOUBT_HELP} 'retry' gives the model an "
        "unknown-tool error."
    )


async def open_session(agent: Running) -> SessionJournal:
    """Take the session's lease, bring the agent up to date with the journal, start a heartbeat.

    Raises ``SessionBusy`` (another live process runs the session) before anything changes.
    """
    store = agent.runtime.store
    assert store is not None
    conversation = agent.conversation
    key = (id(store), agent.session_id)
    if key in _RUNNING:  # another Agent of this process runs it through the same store
        other = _RUNNING[key]
        raise SessionBusy(agent.session_id, f"another Agent in this process ({other})", time.time())
    ttl = agent.runtime.execution.lease_ttl
    lease = await store.acquire_lease(agent.session_id, ttl=ttl, create=True)
    _RUNNING[key] = lease.holder
    try:
        known = conversation.synced_version if conversation.synced_version >= 0 else None
        record = await store.load(agent.session_id, known_version=known)
        if record is None:
            raise SessionStateError(f"session {agent.session_id} was deleted while opening it")
        if record.version != conversation.synced_version:
            view = fold(record)
            fresh = record.version == 0 and conversation.synced_version < 0
            given = conversation.state if fresh else None
            conversation.adopt(view)
            if given:  # Agent(state=...) on a new session: nothing journaled to prefer
                conversation.state = given
            conversation.synced_state = _encode_state(view.state)
        journal = SessionJournal(store, agent.session_id, record.version, lease)
        trail = journal.observer = agent.runtime.audit
        if trail is not None:
            trail.journal = journal
            trail.session_id = agent.session_id
        journal.remember_state(conversation.synced_state)
        journal.since_snapshot = record.version - record.snapshot_seq
        journal.snapshot_seq = record.snapshot_seq
    except BaseException:
        _RUNNING.pop(key, None)
        await store.release_lease(lease)
        raise
    journal.start_heartbeat(ttl)
    return journal


async def close_session(agent: Running, journal: SessionJournal) -> None:
    """End the run's hold on the session: write what is still queued, remember what was
    saved, release the lease."""
    trail = agent.runtime.audit
    try:
        await journal.flush(records_only=True)  # queued after the run's last append
    finally:
        if trail is not None:
            trail.journal = None
            await trail.write_unjournaled(journal.take_audit())
        await _release(agent, journal)


async def _release(agent: Running, journal: SessionJournal) -> None:
    conversation = agent.conversation
    conversation.synced_version = -1 if journal.failed else journal.version
    conversation.synced_state = None if journal.failed else journal.state_json
    _RUNNING.pop((id(journal.store), journal.session_id), None)
    await journal.close()


def _encode_state(state: dict[str, Any]) -> str:
    return json.dumps(state, sort_keys=True, default=repr)


def settle_in_doubt(agent: Running, suspension: Suspension) -> tuple[list[Interrupt], bool]:
    """Decide every in-doubt call of a recovered batch.

    Idempotent tools re-run; a tool's ``reconcile(call)`` returns the result (it
    happened) or None (it did not: re-run); otherwise an ``in_doubt`` interrupt asks a
    human, whose answer (retry / skip / abort) is applied here on the next resume.
    Returns the interrupts still to ask and whether the operator aborted.
    """
    if not suspension.in_doubt or suspension.pending is None:
        return [], False
    calls, results = suspension.pending
    ask: list[Interrupt] = []
    aborted = False
    for index, call in enumerate(calls):
        if call.id not in suspension.in_doubt or results[index] is not None:
            continue
        iid = interrupt_id(IN_DOUBT, suspension.batch_position, call.id, IN_DOUBT, agent.session_id)
        legacy = interrupt_id(IN_DOUBT, suspension.batch_position, call.id, IN_DOUBT)
        if iid not in agent.answers and legacy in agent.answers:  # journaled before binding
            iid = legacy
        tool = agent.runtime.toolset.by_name.get(call.name)
        if iid in agent.answers:
            outcome = _apply_answer(call, agent.answers[iid])
            if isinstance(outcome, ToolResult):
                results[index] = outcome
            elif outcome == "abort":
                aborted = True
        elif tool is not None and tool.idempotent:
            continue
        elif tool is not None and tool.reconcile is not None:
            found = tool.reconcile(call)
            if found is not None:
                results[index] = ToolResult(call.id, call.name, format_tool_output(found))
        else:
            reason = IN_DOUBT_HELP if tool is not None else _gone_help(call.name)
            ask.append(Interrupt(iid, IN_DOUBT, reason, "in_doubt", IN_DOUBT, call))
    suspension.in_doubt = [i.tool_call.id for i in ask if i.tool_call is not None]
    return ask, aborted


def _apply_answer(call: ToolCall, answer: JSONValue) -> ToolResult | str | None:
    if answer == "retry":
        return None
    if answer == "abort":
        return "abort"
    if isinstance(answer, dict) and "skip" in answer:
        return ToolResult(call.id, call.name, format_tool_output(answer["skip"]))
    raise AnswerError(
        f"the answer to an in_doubt interrupt for call {call.id} must be 'retry', 'abort' "
        f'or {{"skip": <result>}}, got {answer!r}'
    )


def check_in_doubt_answer(interrupt: Interrupt, answer: Any) -> None:
    """Refuse a malformed in_doubt answer at resume time, before anything changes."""
    if interrupt.source == "in_doubt" and interrupt.tool_call is not None:
        _apply_answer(interrupt.tool_call, answer)
