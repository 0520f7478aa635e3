"""One redaction path for every view of a session and of its approvals.

The journal keeps the real tool arguments (a resume needs them); everything a person
sees goes through here: the approval rows (filed and decided), the HTTP session view
(and so the web inbox), ``tether sessions show|export`` and ``tether approvals show``.

Arguments are shown as ``redactor(tool, real)`` (the agent's
``ApprovalPolicy(redactor=...)``, when known) with the default
:func:`~tether.governance.masks.redact_secrets` always applied on top: a custom redactor adds masks, it cannot unmask a secret-looking
key. Every string a mask hid is then scrubbed from all other text of the session
(messages, results, reasons) and from every call's shown arguments (a call may quote
what another call's mask hid; every view learns all of its calls before it shows any),
and a key an approval row shows masked is masked in every
call of that tool in the session, so a view never shows more than the approvals do, even
when the viewer does not know the custom redactor.

Redaction covers a whole agent tree: what a mask hid in any session of the tree (a
sub-agent's call, say) is hidden in every session of it (:func:`tree_masks`, built from
the sessions :mod:`tether.governance.redaction_tree` reads; in process the tree's agents share
one set of hidden strings, see :func:`tether.agents.inherit.tree_hidden`). Free text
(error texts, reasons) is also cleared of secret-looking tokens
(:func:`~tether.governance.masks.redact_text`). How values are masked is
:mod:`tether.governance.masks`; this module builds the views from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import Approval, Redactor
from tether.errors import AnswerError
from tether.governance.masks import MASK, Masker, learned_masks, shown_arguments

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.store import SessionRecord
    from tether.messages import Message, ToolCall
    from tether.session import SessionView


@dataclass(slots=True)
class TreeMasks:
    """What the redaction learned from every session of an agent tree: per tool, the keys
    an approval row masked, and the strings masks hid (see :func:`tree_masks`)."""

    masks: dict[str, set[str]] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)


def redactor_of(agent: Any) -> Redactor | None:
    """The custom redactor of an Agent's ``ApprovalPolicy`` (None: the default only)."""
    trail = getattr(agent, "audit_sink", None)
    redactor = getattr(trail, "redactor", None)
    return redactor if callable(redactor) else None


def interrupt_redactor(agent: Any, interrupt: Interrupt) -> Redactor | None:
    """How ``agent``'s hosts show ``interrupt`` (as its row is filed): the redactors of
    every agent on its path and the tree's hidden strings; the agent's redactor only when
    it has no audit trail (no store)."""
    trail = getattr(agent, "audit_sink", None)
    redactor_for = getattr(trail, "redactor_for", None)
    return redactor_of(agent) if redactor_for is None else redactor_for(interrupt)


def edits_to_store(
    approval: Approval, edited: dict[str, Any], redactor: Redactor | None = None
) -> dict[str, Any]:
    """The edited arguments to record for ``approval``: keys left as shown are dropped (the
    real values stay), and an edit the redaction would mask (or of a key the row shows
    masked) is refused, since the row stores only what approvers may see and a masked
    edit could not run as typed."""
    changed = {
        k: v for k, v in edited.items() if k not in approval.arguments or approval.arguments[k] != v
    }
    stored = shown_arguments(approval.tool, changed, redactor)
    # a key the row shows masked was masked when filed (by any policy on the interrupt's
    # path, a sub-agent's too), whatever the redactor known here says
    masked = sorted(
        k for k in changed if stored.get(k, MASK) != changed[k] or approval.arguments.get(k) == MASK
    )
    if masked:
        raise AnswerError(
            f"edited arguments may not set {', '.join(repr(k) for k in masked)}: approvers see "
            "these values masked (secret-looking keys or the agent's redactor) and secrets are "
            f"never stored in the approvals table. Leave them as shown ({MASK!r}) to keep the "
            "real values, or deny the call."
        )
    return changed


def redact_approval(approval: Approval, redactor: Redactor | None = None) -> Approval:
    """An approval as shown: its arguments were redacted when filed; its edited arguments
    go through the same redaction again (rows written before edits were checked)."""
    if approval.edited_args is None:
        return approval
    return replace(
        approval, edited_args=shown_arguments(approval.tool, approval.edited_args, redactor)
    )


@dataclass(frozen=True, slots=True)
class EditedCall:
    """A tool call that ran (or will run) with other arguments than the model's: a policy's
    Transform, a human's edit when approving it (the ``ran`` record of its ``tool_intent``
    entry, see :mod:`tether.session`; an approval row's edit before the resume)."""

    call_id: str
    arguments: dict[str, Any]
    """The arguments that ran (redacted like every other view)."""
    decided_by: str | None
    """The approver (None when the edit came from a direct ``agent.resume`` answer)."""
    decided_at: float | None
    approval_id: str | None
    by: tuple[str, ...] = ("edit",)
    """Who changed the call, in order: ``transform:LABEL``, ``edit``, ``hook``, ``middleware``."""
    tool: str | None = None
    """The tool that ran, when a hook changed it (else the model's)."""

    @property
    def label(self) -> str:
        """Who changed the call, for people: ``Transform by PinStaging; edited by alice``."""
        parts = []
        for who in self.by:
            if who.startswith("transform:"):
                parts.append(f"Transform by {who.removeprefix('transform:')}")
            elif who == "edit":
                parts.append(f"edited by {self.decided_by or 'a resume answer'}")
            else:
                parts.append(f"changed by {'tool middleware' if who == 'middleware' else 'a hook'}")
        return "; ".join(parts)

    def json(self) -> dict[str, Any]:
        """The ``edited`` object of the API's tool-call blocks and timeline rows."""
        return {
            "arguments": self.arguments,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
            "approval_id": self.approval_id,
            "by": list(self.by),
            "label": self.label,
            "tool": self.tool,
        }


@dataclass(slots=True)
class ShownSession:
    """A session as a person sees it: a redacted copy of its view, and the edited calls."""

    view: SessionView
    edits: dict[str, EditedCall] = field(default_factory=dict)
    """By tool call id: the calls that ran with edited arguments."""
    redacted: bool = True
    masker: Masker | None = None
    """The masks of this view (None when unredacted): apply it to anything else shown
    from this session's journal, so it hides exactly what the view hides."""


def show_session(
    record: SessionRecord,
    view: SessionView,
    approvals: Sequence[Approval] = (),
    *,
    redactor: Redactor | None = None,
    unredacted: bool = False,
    tree: TreeMasks | None = None,
) -> ShownSession:
    """THE view of a session for people (API, web page, CLI show/export).

    ``approvals`` are the session's approval rows (their masks and decisions are used);
    ``redactor`` is the agent's custom redactor when the caller knows it (``--app``);
    ``unredacted`` (an admin's explicit request) shows the real values, edits included;
    ``tree``: the masks of the session's agent tree (:func:`tree_masks`), applied too.
    """
    calls = _interrupt_calls(record, view)
    edits = _edits(view, approvals, calls)
    edits.update(_ran(record, approvals, calls))
    if unredacted:
        return ShownSession(view, edits, redacted=False)
    masks = learned_masks(approvals, calls)
    if tree is not None:
        for tool, keys in tree.masks.items():
            masks.setdefault(tool, set()).update(keys)
    redact = Masker(redactor, masks)
    if tree is not None:
        redact.hidden.update(tree.hidden)
    every_call = [b for m in view.messages for b in m.content if b.type == "tool_call"]
    every_call += [c for c in calls.values() if c is not None]
    # a pre-pass: every secret first, so a text or call shown before the call that hides
    # it is scrubbed too
    for call in every_call:
        redact.learn(call.name, dict(call.arguments))
    for cid, e in edits.items():
        redact.learn(e.tool or _tool_of(cid, every_call), dict(e.arguments))
    shown_edits = {
        cid: replace(
            e, arguments=redact.arguments(e.tool or _tool_of(cid, every_call), e.arguments)
        )
        for cid, e in edits.items()
    }
    by_interrupt = {iid: c.id for iid, c in calls.items() if c is not None}
    shown = masked_view(redact, view)
    for interrupt_id, answer in view.answers.items():
        if isinstance(answer, dict) and "args" in answer:  # what ran is in shown_edits
            edit = shown_edits.get(by_interrupt.get(interrupt_id, ""))
            args = MASK if edit is None else edit.arguments
            shown.answers[interrupt_id] = redact.scrub({**answer, "args": args})
    return ShownSession(shown, shown_edits, masker=redact)


def tree_masks(
    sessions: Iterable[tuple[SessionRecord, Sequence[Approval]]], redactor: Redactor | None = None
) -> TreeMasks:
    """The masks every session of one agent tree learns (the rows of its approvals, the
    keys masked in its calls), to apply to each of them: ``show_session(..., tree=...)``.
    A session whose journal cannot be folded is skipped (its own view reports it)."""
    from tether.session import fold

    out = TreeMasks()
    every_call: list[ToolCall] = []
    for record, approvals in sessions:
        try:
            view = fold(record)
        except (KeyError, ValueError, TypeError):
            continue
        calls = _interrupt_calls(record, view)
        for tool, keys in learned_masks(approvals, calls).items():
            out.masks.setdefault(tool, set()).update(keys)
        every_call += [b for m in view.messages for b in m.content if b.type == "tool_call"]
        every_call += [c for c in calls.values() if c is not None]
    # every session's keys first: a key one session's row masks hides that tool's value
    # in every session's calls, whichever session comes first
    masker = Masker(redactor, out.masks, out.hidden)
    for call in every_call:
        masker.learn(call.name, dict(call.arguments))
    return out


def learn_calls(
    hidden: set[str], messages: Sequence[Message], redactor: Redactor | None = None
) -> None:
    """Add to ``hidden`` what the masks hide in the tool calls of ``messages`` (a finished
    child's, so its parent's views and traces hide it too)."""
    masker = Masker(redactor, {}, hidden)
    for message in messages:
        for block in message.content:
            if block.type == "tool_call":
                masker.learn(block.name, dict(block.arguments))


def show_messages(
    messages: Sequence[Message], redactor: Redactor | None = None, masker: Masker | None = None
) -> list[Message]:
    """Messages as a person (or an exported trace) may see them: every tool call's arguments
    redacted like the session views, and what a mask hid scrubbed from all other text.
    ``masker``: one that already knows what to hide (a traced run's, an agent tree's);
    it learns these messages' masks too."""
    redact = masker if masker is not None else Masker(redactor, {})
    for message in messages:  # a pre-pass: every call's secrets before anything is shown
        for block in message.content:
            if block.type == "tool_call":
                redact.learn(block.name, dict(block.arguments))
    return [redact.message(m) for m in messages]


def _tool_of(call_id: str, calls: Iterable[ToolCall]) -> str | None:
    return next((c.name for c in calls if c.id == call_id), None)


def _interrupt_calls(record: SessionRecord, view: SessionView) -> dict[str, ToolCall | None]:
    """Every interrupt the journal still holds -> its tool call (past ones included)."""
    from tether.control.interrupts import Interrupt

    found: dict[str, ToolCall | None] = {}
    raised: list[dict[str, Any]] = []
    if record.snapshot is not None:
        raised += record.snapshot.data.get("interrupts") or []
    for entry in record.entries:
        if entry.kind == "interrupt_raised":
            raised += entry.data.get("interrupts") or []
    for data in raised:
        try:
            interrupt = Interrupt.from_dict(data)
        except (KeyError, TypeError, ValueError):
            continue
        found[interrupt.id] = interrupt.tool_call
    for interrupt in view.interrupts:
        found[interrupt.id] = interrupt.tool_call
    return found


def _edits(
    view: SessionView, approvals: Sequence[Approval], calls: dict[str, ToolCall | None]
) -> dict[str, EditedCall]:
    """The calls that ran (or will run on resume) with arguments a human edited."""
    rows = {a.interrupt_id: a for a in approvals if a.decision == "approve_edited"}
    out: dict[str, EditedCall] = {}
    for interrupt_id, answer in view.answers.items():
        call = calls.get(interrupt_id)
        if call is None or not isinstance(answer, dict) or not isinstance(answer.get("args"), dict):
            continue
        row = rows.get(interrupt_id)
        out[call.id] = EditedCall(
            call.id,
            dict(answer["args"]),
            None if row is None else row.decided_by,
            None if row is None else row.decided_at,
            None if row is None else row.id,
        )
    for interrupt_id, row in rows.items():  # decided, not yet resumed
        call = calls.get(interrupt_id)
        if call is not None and call.id not in out and row.edited_args is not None:
            full = {**call.arguments, **row.edited_args}
            out[call.id] = EditedCall(call.id, full, row.decided_by, row.decided_at, row.id)
    return out


def _ran(
    record: SessionRecord, approvals: Sequence[Approval], calls: dict[str, ToolCall | None]
) -> dict[str, EditedCall]:
    """The calls whose ``tool_intent`` says they ran with other arguments than the model's
    (the last intent of a call wins: a retried call's); the approver of an edit comes
    from its ``approve_edited`` row. Intents folded into a snapshot are not read."""
    rows = {}
    for approval in approvals:
        call = calls.get(approval.interrupt_id)
        if call is not None and approval.decision == "approve_edited":
            rows[call.id] = approval
    out: dict[str, EditedCall] = {}
    for entry in record.entries:
        ran = entry.data.get("ran") if entry.kind == "tool_intent" else None
        if not isinstance(ran, dict) or not isinstance(ran.get("arguments"), dict):
            continue
        call_id = str(entry.data.get("call_id"))
        by = tuple(str(b) for b in ran.get("by") or ())
        row = rows.get(call_id) if "edit" in by else None
        out[call_id] = EditedCall(
            call_id,
            dict(ran["arguments"]),
            None if row is None else row.decided_by,
            None if row is None else row.decided_at,
            None if row is None else row.id,
            by,
            str(entry.data.get("name")),
        )
    return out


def masked_view(masker: Masker, view: SessionView) -> SessionView:
    """``view`` with every message, answer, interrupt, the state, the end's reason and the
    compaction's summary through ``masker`` (the rest of the view is carried as it is)."""
    from tether.session import SessionView

    messages = [masker.message(m) for m in view.messages]
    pending = None
    if view.pending is not None:
        calls = messages[view.position].tool_calls
        results = [None if r is None else masker.block(r) for r in view.pending[1]]
        pending = (calls, results)
    compaction = view.compaction
    summary = None if compaction is None or compaction.summary is None else compaction.summary
    summary = None if summary is None else masker.message(summary)
    return SessionView(
        messages=messages,
        state=masker.scrub(view.state),
        answers={k: masker.scrub(v) for k, v in view.answers.items()},
        status=view.status,
        pending=pending,  # type: ignore[arg-type]
        position=view.position,
        intents=set(view.intents),
        interrupts=[masker.interrupt(i) for i in view.interrupts],
        suspended_reason=view.suspended_reason,
        stop_reason=view.stop_reason,
        end_reason=None if view.end_reason is None else masker.text(view.end_reason),
        compaction=None if compaction is None else replace(compaction, summary=summary),
        system_prompt=None if view.system_prompt is None else masker.text(view.system_prompt),
        system_prompt_known=view.system_prompt_known,
        session_id=view.session_id,
    )
