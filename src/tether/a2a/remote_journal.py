"""A RemoteAgent call's durable notes: where its remote task is, saved with the session.

A note lives in the session state under :data:`NOTES_KEY`, keyed by the call's place
(``"<position>:<call id>"``), and is journaled (fsync'd) the moment it changes: before the
task message is sent (``{"context": ...}``: a re-run must look for the task before it
sends), as soon as the remote task id is known, and before an answer is forwarded. The
loop drops it with the state it journals after the call's result is saved.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tether.tools.context import ToolContext

NOTES_KEY = "__tether_remote_calls__"
"""Session-state key of the notes of RemoteAgent calls still open."""


def call_key(context: ToolContext) -> str:
    """The call's key among the notes (its batch position and id)."""
    run = context.agent.conversation.run
    position = run.batch_position if run is not None else 0
    return f"{position}:{context.tool_call.id}"


def remote_context_id(session_id: str, tool_name: str, key: str) -> str:
    """The A2A ``context_id`` of a call: derived from the session and the call, so a
    re-run (in this process or after a crash) finds the same remote conversation."""
    digest = hashlib.sha256(f"{session_id}\x00{tool_name}\x00{key}".encode()).hexdigest()
    return f"tether-{digest[:32]}"


def note_of(context: ToolContext) -> dict[str, Any] | None:
    """The call's note (None: no earlier attempt of this call got as far as sending)."""
    notes = context.state.get(NOTES_KEY)
    if not isinstance(notes, dict):
        return None
    note = notes.get(call_key(context))
    return dict(note) if isinstance(note, dict) else None


async def write_note(context: ToolContext, note: dict[str, Any]) -> None:
    """Set the call's note and make it durable before the caller goes on."""
    context.state.setdefault(NOTES_KEY, {})[call_key(context)] = note
    run = context.agent.conversation.run
    journal = run.journal if run is not None else None
    if journal is None:  # no store: the note lives as long as the process
        return
    await journal.state_if_changed(context.state)
    await journal.append_many([], durable=True)


def drop_note(context: ToolContext) -> None:
    """Forget the call's note (journaled with the state after its result is saved)."""
    notes = context.state.get(NOTES_KEY)
    if isinstance(notes, dict):
        notes.pop(call_key(context), None)
        if not notes:
            context.state.pop(NOTES_KEY, None)
