"""The end of a run in the journal: its last steps, suspension, usage and status in one
append, a snapshot every SNAPSHOT_EVERY entries; a suspension written outside a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.errors import TetherError

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable import SessionStatus
    from tether.durable.entries import JournalKind
    from tether.journal_fold import SessionView
    from tether.journal_writer import SessionJournal

SNAPSHOT_EVERY = 1000
"""Entries after the last snapshot that trigger a new snapshot at the end of a run.

A snapshot holds the fold (state, answers, the open batch...) and only the messages added
since the snapshot before it (``messages_from`` on): writing one costs what the session's
state and its last 1000 entries cost, not the whole conversation. A load reads every
snapshot (each message is decoded once) and the entries after the last one."""


_STATUS_OF: dict[str, SessionStatus] = {
    "interrupt": "suspended",
    "paused": "suspended",
    "error": "failed",
    "cancelled": "cancelled",
}


async def journal_suspend(
    journal: SessionJournal, interrupts: list[Interrupt], reason: str
) -> None:
    """Suspend outside a run (``resume()`` asking about calls a crash left in doubt): the
    suspension, its approvals and their audit records in one durable append, or none."""
    sidecar = None
    if journal.observer is not None:
        sidecar = journal.observer.closing(
            journal.session_id,
            "interrupt",
            reason,
            {"model_calls": 0, "tool_calls": 0},
            interrupts,
            journal.held,
        )
    raised = {"interrupts": [i.to_dict() for i in interrupts], "stop_reason": "interrupt"}
    entries: list[tuple[JournalKind, dict[str, Any]]] = [
        ("interrupt_raised", raised),
        ("status", {"status": "suspended", "reason": reason}),
    ]
    await journal.append_many(entries, durable=True, status="suspended", sidecar=sidecar)


async def journal_end(
    journal: SessionJournal,
    view: SessionView,
    stop_reason: str,
    reason: str | None,
    usage: dict[str, int],
) -> None:
    """Write the end of a run: state, suspension, usage and status in one append.

    The observer's approvals and audit records (``interrupt.raised``, ``invocation.end``)
    commit in the same transaction: a suspension, its approvals and its audit are saved
    together or not at all. A suspension is made durable against power loss before the
    invocation returns; the steps before it are saved first, so a failed suspension
    leaves a run that ``agent.resume()`` recovers.
    """
    await journal.state_if_changed(view.state)
    status = _STATUS_OF.get(stop_reason, "completed")
    entries: list[tuple[JournalKind, dict[str, Any]]] = []
    if status == "suspended":
        entries.append(
            (
                "interrupt_raised",
                {"interrupts": [i.to_dict() for i in view.interrupts], "stop_reason": stop_reason},
            )
        )
        await journal.flush()
    entries.append(("usage", {"usage": usage}))
    ended = {} if status == "suspended" else {"stop_reason": stop_reason}
    entries.append(("status", {"status": status, "reason": reason, **ended}))
    sidecar = None
    if journal.observer is not None and not journal.failed:
        raised = view.interrupts if status == "suspended" else []
        sidecar = journal.observer.closing(
            journal.session_id, stop_reason, reason, usage, raised, journal.held
        )
    await journal.append_many(
        entries, durable=status == "suspended", status=status, sidecar=sidecar
    )
    journal.end_recorded = not journal.failed
    if journal.since_snapshot >= SNAPSHOT_EVERY and not journal.failed:
        view.status = status
        if status != "suspended":
            view.stop_reason, view.end_reason = stop_reason, reason
        start = await _snapshot_messages(journal)
        await journal.append("snapshot", view.to_snapshot(min(start, len(view.messages))))
        journal.since_snapshot = 0
        journal.snapshot_seq = journal.version


async def _snapshot_messages(journal: SessionJournal) -> int:
    """How many messages the session's latest snapshot covers (0: none, or unreadable:
    the new snapshot then holds them all)."""
    if not journal.snapshot_seq:
        return 0
    seq = journal.snapshot_seq
    try:
        [entry] = await journal.store.read_entries(journal.session_id, seq - 1, until_seq=seq)
    except (TetherError, ValueError):
        return 0
    data = entry.data
    count = data.get("message_count", len(data.get("messages") or []))
    return count if isinstance(count, int) else 0
