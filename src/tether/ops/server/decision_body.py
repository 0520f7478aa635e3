"""The body of ``POST /api/approvals/{id}/decision``, checked against the approval it answers.

A Confirm or a question is answered ``approve`` (optionally with ``edited_args``) or
``deny``. A call a crash left *in doubt* (it started and may have run; no result was
saved) is answered with its own actions, since "approve" would hide that it re-runs a
side effect: ``retry`` (run it again), ``skip`` with a ``result`` (it ran: the model gets
this result) or ``abort`` (stop the run). Each maps onto the store's decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from starlette.exceptions import HTTPException

if TYPE_CHECKING:
    from tether.durable import Approval

NOTE_MAX: Final = 2000
KEYS: Final = ("decision", "note", "edited_args", "result")
ANSWERS: Final = ("approve", "deny")
IN_DOUBT: Final = ("retry", "skip", "abort")
IN_DOUBT_HELP: Final = (
    "'retry' (run the call again: its side effect may happen twice), 'skip' with a "
    "'result' (it ran: the model gets this result instead) or 'abort' (stop the run)"
)


@dataclass(frozen=True, slots=True)
class Decision:
    """What to pass to ``store.approvals.decide``: ``store_decision`` is approve, deny or
    respond; ``response`` the free answer of a respond."""

    asked: str
    store_decision: str
    note: str | None
    edited_args: dict[str, Any] | None
    response: Any = None


def actions(approval: Approval) -> list[str]:
    """The decisions the approval takes, as the page offers them."""
    return list(IN_DOUBT if approval.source == "in_doubt" else ANSWERS)


def read_decision(body: Any, approval: Approval) -> Decision:
    """The decision in ``body`` (parsed JSON) for ``approval``; HTTPException 400 naming
    what is wrong otherwise."""
    if not isinstance(body, dict):
        raise HTTPException(400, "the body must be a JSON object")
    unknown = sorted(set(body) - set(KEYS))
    if unknown:
        raise HTTPException(400, f"unknown field(s) {unknown}; allowed: {', '.join(KEYS)}")
    decision = body.get("decision")
    if decision not in ANSWERS + IN_DOUBT:
        raise HTTPException(
            400,
            "'decision' must be 'approve' or 'deny' ('retry', 'skip' or 'abort' for a "
            "call in doubt)",
        )
    note = body.get("note")
    if note is not None and (not isinstance(note, str) or len(note) > NOTE_MAX):
        raise HTTPException(400, f"'note' must be a string of at most {NOTE_MAX} characters")
    in_doubt = approval.source == "in_doubt"
    if in_doubt and decision in ANSWERS:
        raise HTTPException(
            400,
            f"approval {approval.id} asks about a call a crash left in doubt (it started and "
            f"may have run): answer {IN_DOUBT_HELP}, not {decision!r}",
        )
    if not in_doubt and decision in IN_DOUBT:
        raise HTTPException(
            400,
            f"{decision!r} answers a call left in doubt by a crash; approval {approval.id} "
            "takes 'approve' or 'deny'",
        )
    edited = body.get("edited_args")
    if edited is not None and not isinstance(edited, dict):
        raise HTTPException(400, "'edited_args' must be a JSON object")
    if edited is not None and decision != "approve":
        raise HTTPException(400, "'edited_args' go with an 'approve' decision")
    if "result" in body and decision != "skip":
        raise HTTPException(400, "'result' goes with a 'skip' decision")
    if decision == "skip":
        if "result" not in body:
            raise HTTPException(
                400, "'skip' needs a 'result': what the call returned (the model gets it)"
            )
        return Decision(decision, "respond", note, None, {"skip": body["result"]})
    store = {"retry": "approve", "abort": "deny"}.get(decision, decision)
    return Decision(decision, str(store), note, edited)
