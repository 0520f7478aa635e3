"""One redaction path for every view of a session and of its approvals.

The journal keeps the real tool arguments (a resume needs them); everything a person
sees goes through here: the approval rows (filed and decided), the HTTP session view
(and so the web inbox), ``tether sessions show|export`` and ``tether approvals show``.

Arguments are shown as ``redactor(tool, real)`` (the agent's
``ApprovalPolicy(redactor=...)``, when known) with the default :func:`redact_secrets`
always applied on top: a custom redactor adds masks, it cannot unmask a secret-looking
key. Every string a mask hid is then scrubbed from all other text of the session
(messages, results, reasons), and a key an approval row shows masked is masked in every
call of that tool in the session, so a view never shows more than the approvals do, even
when the viewer does not know the custom redactor.

Redaction covers a whole agent tree: what a mask hid in any session of the tree (a
sub-agent's call, say) is hidden in every session of it (:func:`tree_masks`, built from
the sessions :mod:`tether.durable.redaction_tree` reads; in process the tree's agents share
one set of hidden strings, see :func:`tether.agents.inherit.tree_hidden`). Free text
(error texts, reasons) is also cleared of secret-looking tokens (:func:`redact_text`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tether.durable.approval_types import (
    MASK,
    Approval,
    Redactor,
    _hidden_strings,
    args_sha256,
    redact_secrets,
)
from tether.errors import AnswerError

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.store import SessionRecord
    from tether.messages import ContentBlock, Message, ToolCall
    from tether.models.base import Model
    from tether.session import SessionView

_TOKENS = re.compile(
    r"(?P<bearer>\b(?:bearer|basic)\s+)(?=[A-Za-z._~+/-]*[0-9=])[A-Za-z0-9._~+/-]{8,}=*"
    r"|\bsk-[A-Za-z0-9_-]{8,}"
    r"|(?P<key>api[_-]?key|token|secret|passw(?:or)?d|pwd|credential)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;&}\]]{4,})",
    re.IGNORECASE,
)
"""Secret-looking tokens in free text: ``Bearer <token>`` / ``Basic <token>`` (a token with a
digit or ``=``: "a basic implementation" is prose), ``sk-...`` keys, and the value of
``api_key=...`` / ``"password": "..."`` (a key ending like a secret; ``tokens: 12`` is not).
Linear time: every branch starts with a literal and never backtracks over a long run."""


_TRIGGERS = ("bearer", "basic", "sk-", "api", "token", "secret", "passw", "pwd", "credential")


def _token(match: re.Match[str]) -> str:
    if match.group("bearer"):
        return match.group("bearer") + MASK
    if match.group("key"):
        return match.group("key") + match.group("sep") + MASK
    return MASK


def redact_text(text: str, hidden: Iterable[str] = ()) -> str:
    """Free text as a person may see it: every ``hidden`` string masked (longest first),
    then every secret-looking token (see ``_TOKENS``)."""
    for secret in sorted(hidden, key=len, reverse=True):
        text = text.replace(secret, MASK)
    lowered = text.lower()
    if any(word in lowered for word in _TRIGGERS):  # re is slow to scan: most text has none
        text = _TOKENS.sub(_token, text)
    return text


def model_keys(model: Model) -> set[str]:
    """The API keys configured on ``model`` (and the models of a chain), to mask them in
    provider error texts that echo them."""
    keys: set[str] = set()
    for key in getattr(model, "_keys", None) or ():  # ResilientModel's rotation list
        if isinstance(key, str) and len(key) >= 4:
            keys.add(key)
    for inner in getattr(model, "models", None) or ():
        keys |= model_keys(inner)
    return keys


def provider_text(text: str, model: Model) -> str:
    """A failure text to journal: the model's API keys and secret-looking tokens masked."""
    return redact_text(text, model_keys(model))


@dataclass(slots=True)
class TreeMasks:
    """What the redaction learned from every session of an agent tree: per tool, the keys
    an approval row masked, and the strings masks hid (see :func:`tree_masks`)."""

    masks: dict[str, set[str]] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)


def shown_arguments(
    tool: str | None, real: dict[str, Any], redactor: Redactor | None = None
) -> dict[str, Any]:
    """Tool arguments as a person may see them: the custom redactor, then the default mask."""
    shown = redactor(tool, real) if redactor is not None else real
    return redact_secrets(tool, shown)


def redactor_of(agent: Any) -> Redactor | None:
    """The custom redactor of an Agent's ``ApprovalPolicy`` (None: the default only)."""
    trail = getattr(agent, "audit_sink", None)
    redactor = getattr(trail, "redactor", None)
    return redactor if callable(redactor) else None


def edits_to_store(
    approval: Approval, edited: dict[str, Any], redactor: Redactor | None = None
) -> dict[str, Any]:
    """The edited arguments to record for ``approval``: keys left as shown are dropped (the
    real values stay), and an edit the redaction would mask is refused, since the row
    stores only what approvers may see and a masked edit could not run as typed."""
    changed = {
        k: v for k, v in edited.items() if k not in approval.arguments or approval.arguments[k] != v
    }
    stored = shown_arguments(approval.tool, changed, redactor)
    masked = sorted(k for k in changed if stored.get(k, MASK) != changed[k])
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
    masks = _learned_masks(approvals, calls)
    if tree is not None:
        for tool, keys in tree.masks.items():
            masks.setdefault(tool, set()).update(keys)
    redact = Masker(redactor, masks)
    if tree is not None:
        redact.hidden.update(tree.hidden)
    every_call = [b for m in view.messages for b in m.content if b.type == "tool_call"]
    every_call += [c for c in calls.values() if c is not None]
    for call in every_call:
        redact.call(call)  # collect every secret first, to scrub the text before its call too
    shown_edits = {
        cid: replace(
            e, arguments=redact.arguments(e.tool or _tool_of(cid, every_call), e.arguments)
        )
        for cid, e in edits.items()
    }
    by_interrupt = {iid: c.id for iid, c in calls.items() if c is not None}
    shown = redact.view(view)
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
    for record, approvals in sessions:
        try:
            view = fold(record)
        except (KeyError, ValueError, TypeError):
            continue
        calls = _interrupt_calls(record, view)
        masker = Masker(redactor, _learned_masks(approvals, calls))
        for tool, keys in masker.masks.items():
            out.masks.setdefault(tool, set()).update(keys)
        for message in view.messages:
            for block in message.content:
                if block.type == "tool_call":
                    masker.call(block)
        for call in calls.values():
            if call is not None:
                masker.call(call)
        out.hidden |= masker.hidden
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
                masker.call(block)


def show_messages(
    messages: Sequence[Message], redactor: Redactor | None = None, masker: Masker | None = None
) -> list[Message]:
    """Messages as a person (or an exported trace) may see them: every tool call's arguments
    redacted like the session views, and what a mask hid scrubbed from all other text.
    ``masker``: one that already knows what to hide (a traced run's, an agent tree's);
    it learns these messages' masks too."""
    redact = masker if masker is not None else Masker(redactor, {})
    for message in messages:
        for block in message.content:
            if block.type == "tool_call":
                redact.call(block)
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


def _learned_masks(
    approvals: Sequence[Approval], calls: dict[str, ToolCall | None]
) -> dict[str, set[str]]:
    """Per tool, the top-level keys an approval row shows changed from the real call: the
    agent's redactor masked them, so they are masked in every call of that tool."""
    masks: dict[str, set[str]] = {}
    for approval in approvals:
        call = calls.get(approval.interrupt_id)
        if call is None or approval.tool != call.name:
            continue
        real = dict(call.arguments)
        if args_sha256(real) != approval.args_sha256:
            continue
        for key, value in real.items():
            shown = approval.arguments.get(key, MASK)
            if isinstance(value, dict | list) and isinstance(shown, dict | list):
                continue  # masked inside: the default mask and the scrub cover it
            if shown != value:
                masks.setdefault(call.name, set()).add(key)
    return masks


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


class Masker:
    """Redacts tool calls and remembers what it hid, to scrub it from every other string
    (a :class:`ShownSession` keeps the one that made it, for views built from the journal,
    such as the timeline)."""

    def __init__(
        self,
        redactor: Redactor | None,
        masks: dict[str, set[str]],
        hidden: set[str] | None = None,
    ) -> None:
        self.redactor = redactor
        self.masks = masks
        self.hidden: set[str] = set() if hidden is None else hidden
        """What the masks hid (shared with others when given: an agent tree's set)."""

    def arguments(self, tool: str | None, real: dict[str, Any]) -> dict[str, Any]:
        shown = shown_arguments(tool, real, self.redactor)
        for key in self.masks.get(tool or "", ()):
            if key in shown:
                shown[key] = MASK
        _hidden_strings(real, shown, self.hidden)
        return shown

    def call(self, call: ToolCall) -> ToolCall:
        return replace(call, arguments=self.arguments(call.name, dict(call.arguments)))

    def scrub(self, value: Any) -> Any:
        """``value`` (text, or JSON-like data) with every hidden string and secret-looking
        token masked (:func:`redact_text` on each string)."""
        if isinstance(value, str):
            return redact_text(value, self.hidden)
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def text(self, value: str) -> str:
        """One text (a span's status, a reason) as it may be shown."""
        return redact_text(value, self.hidden)

    def block(self, block: ContentBlock) -> ContentBlock:
        if block.type == "tool_call":
            return self.call(block)
        if block.type == "tool_result":
            return replace(block, content=self.scrub(block.content))
        return replace(block, text=self.scrub(block.text))

    def message(self, message: Message) -> Message:
        return replace(message, content=[self.block(b) for b in message.content])

    def interrupt(self, interrupt: Interrupt) -> Interrupt:
        call = interrupt.tool_call
        return replace(
            interrupt,
            reason=self.scrub(interrupt.reason),
            tool_call=None if call is None else self.call(call),
        )

    def view(self, view: SessionView) -> SessionView:
        from tether.session import SessionView

        messages = [self.message(m) for m in view.messages]
        pending = None
        if view.pending is not None:
            calls = messages[view.position].tool_calls
            results = [None if r is None else self.block(r) for r in view.pending[1]]
            pending = (calls, results)
        return SessionView(
            messages=messages,
            state=self.scrub(view.state),
            answers={k: self.scrub(v) for k, v in view.answers.items()},
            status=view.status,
            pending=pending,  # type: ignore[arg-type]
            position=view.position,
            intents=set(view.intents),
            interrupts=[self.interrupt(i) for i in view.interrupts],
            suspended_reason=view.suspended_reason,
        )
