"""What a timeline says in words: approval decisions, in-doubt settlements, its notes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tether.durable import Approval

SETTLED: Final = {"retry": "retried", "abort": "aborted", "skip": "skipped"}
"""What an in-doubt call became, by its answer (``{"skip": result}`` is a skip)."""


def settlement(answer: Any) -> str | None:
    """retry, skip or abort: an in-doubt answer's kind (None: not one)."""
    if isinstance(answer, dict) and "skip" in answer:
        return "skip"
    return answer if answer in ("retry", "abort", "skip") else None


def decided(approval: Approval, in_doubt: bool) -> str | None:
    """An approval's decision for people: ``approved by alice``; an in-doubt call's says
    what became of the call (``skipped by alice``: a ``respond`` with ``{"skip": ...}``)."""
    if approval.status == "pending":
        return None
    what: str = approval.status
    if in_doubt:
        decision = approval.on_expiry if approval.status == "expired" else approval.decision
        if decision == "respond":
            what = SETTLED.get(settlement(approval.response) or "", "answered")
        else:  # approve re-runs the call, deny aborts the run (approvals.py)
            what = "retried" if decision in ("approve", "approve_edited") else "aborted"
        what += " (expired)" if approval.status == "expired" else ""
    return f"{what} by {approval.decided_by or 'an approver'}"


def notes(broken: list[int], unknown: dict[str, list[int]]) -> list[str]:
    """What the timeline could not show, counted and labelled (``seq`` names entries)."""
    out = []
    if broken:
        out.append(f"{_entries(len(broken))} tether could not read ({_seqs(broken)})")
    for kind, seqs in sorted(unknown.items()):
        out.append(
            f"{_entries(len(seqs))} of a kind the timeline does not show: {kind} ({_seqs(seqs)})"
        )
    return out


def _entries(n: int) -> str:
    return f"{n} journal {'entry' if n == 1 else 'entries'}"


def _seqs(seqs: list[int]) -> str:
    shown = ", ".join(map(str, seqs[:20])) + (
        f", ... ({len(seqs) - 20} more)" if len(seqs) > 20 else ""
    )
    return ("seq " if len(seqs) == 1 else "seqs ") + shown
