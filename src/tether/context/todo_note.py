"""The task list re-injected after a compression, so a compressed agent keeps its plan.

When the context step compresses and the session state holds a task list (the ``todo``
tool's, ``tether/tools/todo.py``), the compaction's summary gets one more text block: the
open items in full, the finished ones by id (Hermes re-injects only the open ones, since
finished items shown again get redone). The note is part of the compaction: the
BeforeContextCompression hook and interventions see it, the journal keeps it, and a
resume rebuilds the same view. A later summary is written from the earlier one without it.
"""

from __future__ import annotations

from tether.context.compaction import Compaction
from tether.messages import Message, TextBlock
from tether.tools.todo import ACTIVE, items_of, line, shown

TODO_MARK = "[tether: the session's task list (todo tool), as of this compression]"
"""First line of the note."""
_SEPARATOR = "\n\n"


def with_todo_note(compaction: Compaction, stored: object) -> Compaction:
    """``compaction`` whose summary ends with the task list (unchanged when it is empty
    or malformed); a compaction without a summary gets the note as its summary, and a
    summary that already ends with a note has it replaced."""
    note = todo_note(stored)
    if note is None:
        return compaction
    summary = compaction.summary
    if summary is None:
        return Compaction(compaction.start, compaction.end, Message.user(note))
    # a summary a manager handed back again keeps one note, the current one
    kept = [b for b in summary.content if not _is_note(b)]
    block = TextBlock(_SEPARATOR + note)
    return Compaction(compaction.start, compaction.end, Message(summary.role, [*kept, block]))


def todo_note(stored: object) -> str | None:
    """The note for a stored task list; None when there is nothing to show."""
    items = items_of(stored)
    if not items:
        return None
    lines = [TODO_MARK]
    lines.extend(line(item) for item in items if item["status"] in ACTIVE)
    for status in ("completed", "cancelled"):
        ids = [shown(i["id"]) for i in items if i["status"] == status]
        if ids:
            lines.append(f"{status.capitalize()} (not shown): {', '.join(ids)}")
    lines.append("The todo tool (action list) shows every item.")
    return "\n".join(lines)


def _is_note(block: object) -> bool:
    return type(block) is TextBlock and block.text.startswith(_SEPARATOR + TODO_MARK)


def without_todo_note(text: str) -> str:
    """A summary's text without its task-list note (what the next summary is written from)."""
    at = text.find(_SEPARATOR + TODO_MARK)
    return text if at < 0 else text[:at]
