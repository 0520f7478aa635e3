"""A session's timeline: one row per step, built from its journal, approvals and audit log.

Rows: run starts and resumes (which process, which model), user input, model calls
(tokens, attempts, provider retries and fallbacks with their reasons, the model that
answered), context compactions (tokens before/after, manager, summary or omission
marker), tool calls (status, redacted arguments, the arguments that ran when a Transform
or an edit changed them, and who did), intervention verdicts and AGENT-HOOKS records,
interrupts with the approval that answered each (who, when, note), suspensions, the wait
for a human (compressed on the time axis), in-doubt settlements, the end of each run and
the cut-off of a run whose process died; a workflow's session shows node rows instead of
its conductor's model calls (:mod:`~tether.ops.timeline_nodes`). ``notes`` count what it could not show. A sub-agent's session is nested under the
tool call that ran it (``depth`` and ``parent`` on each row, see :mod:`tether.ops.timeline_read`). Everything shown passes through the session's one redaction
(:func:`~tether.governance.redaction.show_session`, its ``masker``).

Times come from the journal: an entry's ``at`` is when its append committed, and a run
commits several steps at once (a model call's message goes out with the next tool's
intent), so a model call lasts from the previous commit (or the run's ``started_at``)
to its message's commit; a tool call from its intent to its result, or the audit log's
measured ``duration_ms`` when there is one. Approximations, stated as such in the docs.

The parts: :mod:`~tether.ops.timeline_rows` (journal entries to rows, one
:class:`~tether.ops.timeline_step.Step` each), :mod:`~tether.ops.timeline_audit` (the
audit log's records and verdicts), :mod:`~tether.ops.timeline_labels` (decisions and
notes in words), :mod:`~tether.ops.timeline_document` (the JSON: nesting, usage, time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.agents.addresses import lifted_id
from tether.ops.timeline_audit import AUDIT_FIELDS as AUDIT_FIELDS
from tether.ops.timeline_audit import place_audit
from tether.ops.timeline_document import Row as Row
from tether.ops.timeline_document import Tree, document
from tether.ops.timeline_labels import SETTLED as SETTLED
from tether.ops.timeline_labels import notes as notes
from tether.ops.timeline_read import TimelineData, read_timeline
from tether.ops.timeline_rows import UNSHOWN as UNSHOWN
from tether.ops.timeline_rows import RowBuilder
from tether.ops.timeline_step import CLIP as CLIP
from tether.ops.timeline_step import FAILED as FAILED
from tether.ops.timeline_step import ApprovalOf
from tether.ops.timeline_step import clip as clip

if TYPE_CHECKING:
    from tether.durable import Approval, Entry, SessionRecord
    from tether.durable.approvals import Redactor
    from tether.durable.audit import AuditRecord
    from tether.governance.redaction import ShownSession, TreeMasks

__all__ = ["TimelineData", "build_timeline", "read_timeline", "timeline_of"]


def _rows(
    record: SessionRecord,
    entries: list[Entry],
    shown: ShownSession,
    approval_of: ApprovalOf,
    audit: list[AuditRecord],
) -> Tree:
    """One session's rows (its sub-agents' sessions are added by the caller)."""
    from tether.durable.claims import SUB_SESSION_KEY
    from tether.ops.timeline_nodes import place_interrupts

    tree_of = record.metadata.get(SUB_SESSION_KEY)
    path = tree_of.get("agent_path") if isinstance(tree_of, dict) else None
    b = RowBuilder(record.session_id, shown, approval_of, shown.masker, path=str(path or ""))
    for e in entries:
        b.entry(e)
    place_interrupts(b)
    if b.suspended is not None:  # still waiting: the gap runs until now (the last update)
        end = max(record.updated_at, b.suspended.start)
        b.add("wait", "waiting for a human", b.suspended.start, end).status = "waiting"
    place_audit(b, audit)
    return Tree(
        record.session_id, record.status, b.steps, b.broken, unknown=b.unknown, workflow=b.workflow
    )


def build_timeline(
    record: SessionRecord,
    entries: list[Entry],
    shown: ShownSession,
    approvals: list[Approval],
    audit: list[AuditRecord],
) -> dict[str, Any]:
    """The timeline of one session without its sub-agents, as JSON (see the module
    docstring); ``entries`` is the whole journal, ``shown`` the session's redacted view
    (its masker is applied here)."""
    by_interrupt = {a.interrupt_id: a for a in approvals}
    return document(record, _rows(record, entries, shown, by_interrupt.get, audit))


def timeline_of(data: TimelineData, redactor: Redactor | None = None) -> dict[str, Any]:
    """THE timeline of a session (API, page and ``tether sessions timeline``): the whole
    journal folded and shown through :func:`~tether.governance.redaction.show_session`, with
    its sub-agents' sessions nested under the calls that ran them. Raises
    KeyError/ValueError/TypeError for a journal the fold cannot use (a child's such
    journal is named on its tool call's row instead)."""
    from tether.governance.redaction import tree_masks

    by_interrupt = {a.interrupt_id: a for a in data.approvals}
    masks = tree_masks(_sessions(data) + data.tree, redactor)  # what the tree masks
    return document(data.record, _tree(data, redactor, by_interrupt.get, masks))


def _sessions(data: TimelineData) -> list[tuple[SessionRecord, list[Approval]]]:
    found = [(data.record, data.approvals)]
    for child in data.children.values():
        found += _sessions(child)
    return found


def _tree(
    data: TimelineData, redactor: Redactor | None, approval_of: ApprovalOf, masks: TreeMasks
) -> Tree:
    from tether.governance.redaction import show_session
    from tether.session import fold

    record = data.record
    shown = show_session(record, fold(record), data.approvals, redactor=redactor, tree=masks)
    tree = _rows(record, record.entries, shown, approval_of, data.audit)
    for sid, child in data.children.items():
        assert child.spawned_by is not None
        tool, position, call_id = child.spawned_by

        def lifted(
            iid: str, tool: str = tool, position: int = position, call_id: str = call_id
        ) -> Approval | None:
            # a child's interrupt reaches the inbox lifted into its parent (addresses.py)
            return approval_of(lifted_id(iid, tool, call_id, position))

        try:
            tree.children[sid] = _tree(child, redactor, lifted, masks)
        except (KeyError, ValueError, TypeError) as exc:
            error = f"its journal has an entry tether cannot read: {exc!r}"
            tree.children[sid] = Tree(sid, child.record.status, [], [], error=error)
    return tree
