"""Deciding approval rows from answers given to a run: one record of what will run.

An answer given straight to a run (``agent.resume({id: answer})``, an MCP host's
elicitation, a worker resuming from the inbox) and a decision made in the inbox
(:func:`decide_approval`: the CLI, the HTTP API) are two ways of answering one question. Before the
answers are journaled, :func:`decide_answers` makes the row say the same: a pending
row is decided with the answer and who gave it; a row already decided (the worker's
case: the answer came from it) must say the same thing, else the answer is refused
(the first decision wins) and nothing is recorded.
"""

from __future__ import annotations

import getpass
import json
import socket
from typing import TYPE_CHECKING, Any, Protocol

from tether.control.interrupts import ConfirmDecision, Interrupt
from tether.errors import AnswerError
from tether.governance.redaction import edits_to_store, redactor_of

if TYPE_CHECKING:
    from tether.durable.approval_types import Approval, Decision
    from tether.durable.store import Store
    from tether.messages import JSONValue


class Answered(Protocol):
    """What deciding needs of the agent a run belongs to (an Agent is one): its session,
    its store and its audit trail (which says whether it files approval rows and holds
    the custom redactor). The edit rule is reached through the store's ``validate``."""

    @property
    def session_id(self) -> str: ...
    @property
    def store(self) -> Any: ...
    @property
    def audit_sink(self) -> Any: ...


def default_decided_by() -> str:
    """Who answered through ``agent.resume`` when the caller does not say: ``user@host``."""
    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    return f"{user}@{socket.gethostname()} (agent.resume)"


async def decide_answers(
    agent: Answered,
    interrupts: dict[str, Interrupt],
    answers: dict[str, JSONValue],
    decided_by: str | None,
) -> None:
    """Decide the approval row of every answered interrupt that has one (see the module).

    Every row is checked before any is decided: a refused answer records nothing.
    """
    approvals = _approvals(agent)
    if approvals is None or not answers:
        return
    rows: dict[str, Approval] = {}
    for row in await approvals.find(session_id=agent.session_id, limit=10_000):
        if row.interrupt_id in answers and row.interrupt_id in interrupts:
            rows[row.interrupt_id] = row  # oldest first: the newest request wins
    todo: list[tuple[Approval, tuple[Decision, dict[str, Any]]]] = []
    for iid, row in rows.items():
        interrupt, answer = interrupts[iid], answers[iid]
        if row.status == "pending":
            decision, fields = _as_decision(interrupt, answer)
            if fields.get("edited_args"):  # refused here, before any row is decided
                edits_to_store(row, fields["edited_args"], redactor_of(agent))
            todo.append((row, (decision, fields)))
            continue
        recorded = await approvals.response_of(row)
        if not _agree(interrupt, recorded, answer):
            who = row.decided_by or "an approver"
            raise AnswerError(
                f"interrupt {iid} of session {agent.session_id} was already decided in the "
                f"approvals inbox ({row.status} by {who}, approval {row.id}); the first "
                "decision wins and this answer was not recorded: resume with the recorded "
                "answer (store.approvals.answers_for) or without this id"
            )
    who = decided_by or default_decided_by()
    for row, (decision, fields) in todo:
        await approvals.decide(row.id, decision, decided_by=who, **fields)


async def decide_approval(
    store: Store,
    approval_id: str,
    decision: Decision,
    *,
    decided_by: str,
    note: str | None = None,
    edited_args: dict[str, Any] | None = None,
    response: Any = None,
    agent: Answered | None = None,
) -> Approval:
    """The inbox's way of answering (``tether approvals``, the HTTP API and web inbox):
    decide the row, first decision wins, refused when its interrupt was answered another
    way. An edit needs ``agent`` (the app's Agent): the edit rule judges it against the
    tool's schema and the policies ahead of the Confirm before anything is recorded."""
    if edited_args is not None and agent is None:
        raise AnswerError(
            "edited arguments are checked against the agent's tool and policies before they "
            "are recorded: give the app's agent (--app module:factory), or approve without edits"
        )
    return await store.approvals.decide(
        approval_id,
        decision,
        decided_by=decided_by,
        note=note,
        edited_args=edited_args,
        response=response,
        validate=agent,
    )


def _approvals(agent: Answered) -> Any:
    trail = agent.audit_sink
    if trail is None or not trail.files_approvals:
        return None
    return getattr(agent.store, "approvals", None)


def _as_decision(interrupt: Interrupt, answer: JSONValue) -> tuple[Decision, dict[str, Any]]:
    """The row decision that records ``answer`` (already checked against ``interrupt``)."""
    if interrupt.source == "in_doubt":
        if answer == "retry":
            return "approve", {}
        if answer == "abort":
            return "deny", {"note": "abort"}
        return "respond", {"response": answer}
    if interrupt.source != "intervention":
        return "respond", {"response": answer}
    decision = ConfirmDecision.parse(answer)
    if not decision.approved:
        return "deny", {"note": decision.reason}
    if decision.args is None or interrupt.tool_call is None:
        return "approve", {"note": decision.reason}
    real = interrupt.tool_call.arguments
    edited = {k: v for k, v in decision.args.items() if not _same(real.get(k), v)}
    dropped = sorted(set(real) - set(decision.args))
    if dropped:
        raise AnswerError(
            f"the edited arguments for interrupt {interrupt.id} leave out "
            f"{', '.join(map(repr, dropped))}: 'args' is the whole call as it will run; "
            "give every argument"
        )
    return "approve", {"note": decision.reason, "edited_args": edited}


def _agree(interrupt: Interrupt, recorded: JSONValue, answer: JSONValue) -> bool:
    """Whether ``answer`` decides what the row ``recorded`` (a note or reason may differ)."""
    if _same(recorded, answer):
        return True
    try:
        mine, theirs = _as_decision(interrupt, answer), _as_decision(interrupt, recorded)
    except AnswerError:
        return False
    return mine[0] == theirs[0] and _same(
        {k: v for k, v in mine[1].items() if k != "note"},
        {k: v for k, v in theirs[1].items() if k != "note"},
    )


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
