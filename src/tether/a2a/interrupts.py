"""Pending interrupts as A2A data parts, and the answers a caller sends back.

A task waiting in ``input-required`` carries one data part per pending interrupt
(:func:`interrupt_part`): its id, name, reason, source, the tool and its arguments as
the approval row shows them (redacted when filed), the agent path of a sub-agent's
interrupt, the answer's JSON schema, the expiry and who may answer it. The caller
answers with a message on the task whose data part maps interrupt ids to answers (the
shapes ``agent.resume`` takes, :func:`answers_in`).

Who may answer (:func:`check_answers`): a question a tool asked (the ``clarify`` tool, a
plain ``ToolContext.interrupt``: source ``tool``) is the task's own caller's to answer;
everything else (a Confirm of an intervention or hook, a call left in doubt) is an
approval and needs the inbox's policy (``approve:PATTERN`` for the tool, or admin), so
the agent that asked for a deletion cannot approve it with its own ``invoke`` token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from a2a.types.a2a_pb2 import Message, Part
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value
from starlette.exceptions import HTTPException

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable import Approval
    from tether.durable.approvers import Approver
    from tether.ops.server.auth import Policy

CONFIRM_SCHEMA: Final = {
    "oneOf": [
        {"type": "boolean"},
        {"enum": ["approve", "deny"]},
        {
            "type": "object",
            "required": ["approved"],
            "properties": {
                "approved": {"type": "boolean"},
                "reason": {"type": "string"},
                "args": {"type": "object", "description": "the whole call, edited"},
            },
        },
    ]
}
IN_DOUBT_SCHEMA: Final = {
    "description": "'retry' (run it again), 'abort' (stop the run), or the result the call had",
    "oneOf": [{"enum": ["retry", "abort"]}, {}],
}
MAX_ANSWERS: Final = 100


def asks_the_caller(interrupt: Interrupt | Approval) -> bool:
    """Whether the interrupt is a question to the task's caller (a tool asked it) rather
    than an approval for an approver."""
    return interrupt.source == "tool"


def interrupt_part(interrupt: Interrupt, row: Approval | None) -> Part:
    """The data part of one pending interrupt (``row``: its approval, when filed)."""
    from tether.agents.addresses import address
    from tether.governance.approvals import shown_interrupt

    if row is not None:
        arguments, reason = row.arguments, row.reason
    else:
        arguments, reason = shown_interrupt(interrupt)
    call = interrupt.tool_call
    if interrupt.source == "intervention":
        schema: dict[str, Any] = CONFIRM_SCHEMA
    elif interrupt.source == "in_doubt":
        schema = IN_DOUBT_SCHEMA
    elif interrupt.name.rsplit("/", 1)[-1] == "clarify":
        schema = {"type": "string"}
    else:
        schema = {}
    data = {
        "type": "tether.interrupt",
        "id": interrupt.id,
        "name": interrupt.name,
        "reason": reason,
        "source": interrupt.source,
        "tool": None if call is None else call.name,
        "arguments": arguments if call is not None else None,
        "path": address(interrupt),
        "answer_schema": schema,
        "expires_at": None if row is None else row.expires_at,
        "approval_id": None if row is None else row.id,
        "answered_by": "caller" if asks_the_caller(interrupt) else "approver",
    }
    value = Value()
    ParseDict(data, value)
    return Part(data=value, media_type="application/json")


def answers_in(message: Message) -> dict[str, Any]:
    """The answers a message carries: the union of its data parts, each an object of
    interrupt id -> answer. InvalidParamsError naming what is wrong otherwise."""
    out: dict[str, Any] = {}
    for part in message.parts:
        if not part.HasField("data"):
            continue
        data = MessageToDict(part.data)
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise InvalidParamsError(
                message="an answer's data part must be an object of interrupt id -> answer"
            )
        out.update(data)
    if len(out) > MAX_ANSWERS:
        raise InvalidParamsError(message=f"at most {MAX_ANSWERS} answers in one message")
    return out


def check_answers(
    answers: dict[str, Any],
    pending: dict[str, Interrupt],
    rows: dict[str, Approval],
    approver: Approver,
    *,
    own: bool,
    policy: Policy,
) -> None:
    """Refuse answers to unknown or answered interrupts (InvalidParamsError naming the
    id) and answers the caller may not give (HTTPException 403), before anything runs."""
    for iid in answers:
        if iid not in pending:
            known = ", ".join(sorted(pending)) or "none"
            raise InvalidParamsError(
                message=f"interrupt {iid[:80]!r} is unknown or already answered on this task "
                f"(pending: {known}); nothing was run",
                data={"interrupt_id": iid[:80]},
            )
        row = rows.get(iid)
        if row is not None and row.status != "pending":
            who = row.decided_by or "an approver"
            raise InvalidParamsError(
                message=f"interrupt {iid!r} was already answered ({row.status} by {who}); "
                "the first decision wins and nothing was run",
                data={"interrupt_id": iid},
            )
    for iid in answers:
        interrupt, row = pending[iid], rows.get(iid)
        if asks_the_caller(interrupt) and (own or (row is not None and policy(approver, row))):
            continue
        if (row is not None and policy(approver, row)) or "admin" in approver.roles:
            continue
        what = interrupt.tool_call.name if interrupt.tool_call is not None else interrupt.name
        raise HTTPException(
            403,
            f"approver {approver.name!r} (roles: {', '.join(approver.roles)}) may not answer "
            f"interrupt {iid} ({what!r}): it is an approval; it needs a role like "
            f"approve:{what} or admin",
        )
