"""A session's timeline: one row per step, built from its journal, approvals and audit log.

Rows: run starts and resumes (which process, which model), user input, model calls
(tokens, attempts, provider retries and fallbacks with their reasons, the model that
answered), context compactions (tokens before/after, manager, summary or omission
marker), tool calls (status, redacted arguments, the arguments that ran when a Transform
or an edit changed them, and who did), intervention verdicts and AGENT-HOOKS records,
interrupts with the approval that answered each (who, when, note), suspensions, the wait
for a human (compressed on the time axis), in-doubt settlements, the end of each run and
the cut-off of a run whose process died. ``notes`` count what it could not show. A sub-agent's session is nested under the
tool call that ran it (``depth`` and ``parent`` on each row, see :mod:`tether.ops.timeline_read`). Everything shown passes through the session's one redaction
(:func:`~tether.governance.redaction.show_session`, its ``masker``).

Times come from the journal: an entry's ``at`` is when its append committed, and a run
commits several steps at once (a model call's message goes out with the next tool's
intent), so a model call lasts from the previous commit (or the run's ``started_at``)
to its message's commit; a tool call from its intent to its result, or the audit log's
measured ``duration_ms`` when there is one. Approximations, stated as such in the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from tether.agents.addresses import child_session_id, lifted_id
from tether.context.compaction import OMITTED_MARK, SUMMARY_MARK
from tether.governance.masks import MASK
from tether.messages import add_cost
from tether.ops.timeline_read import TimelineData, read_timeline

if TYPE_CHECKING:
    from tether.durable import Approval, Entry, SessionRecord
    from tether.durable.approvals import Redactor
    from tether.durable.audit import AuditRecord
    from tether.governance.masks import Masker
    from tether.governance.redaction import ShownSession, TreeMasks

__all__ = ["TimelineData", "build_timeline", "read_timeline", "timeline_of"]

CLIP: Final = 2000
"""Characters of one text, argument list or result kept in a step's details."""
FAILED: Final = frozenset(
    {
        "error",
        "denied",
        "cancelled",
        "timeout",
        "failed",
        "in_doubt",
        "crashed",
        "in doubt -> aborted",
    }
)
SETTLED: Final = {"retry": "retried", "abort": "aborted", "skip": "skipped"}
"""What an in-doubt call became, by its answer (``{"skip": result}`` is a skip)."""
AUDIT_FIELDS: Final = ("point", "policy", "action", "tool", "call_id", "stop_reason")
"""Audit-log fields a viewer sees in the timeline (payload-free; the auditor's view has all)."""
UNSHOWN: Final = frozenset({"snapshot", "state", "system_prompt"})
"""Entry kinds the timeline knows and shows no row for."""


def clip(text: str) -> str:
    return text if len(text) <= CLIP else text[:CLIP] + f"... ({len(text) - CLIP} more)"


@dataclass
class _Step:
    kind: str
    title: str
    start: float
    end: float
    order: float
    seq: int | None = None
    status: str = "ok"
    detail: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    approval_id: str | None = None
    interrupt_id: str | None = None
    audit: list[int] = field(default_factory=list)
    spawn: str | None = None
    """A tool call's child session id, if the tool is a sub-agent (addresses.py)."""

    def json(self, index: int, depth: int, parent: int | None, session: str) -> dict[str, Any]:
        return {
            "index": index,
            "depth": depth,
            "parent": parent,
            "session_id": session,
            "kind": self.kind,
            "title": self.title,
            "seq": self.seq,
            "start": self.start,
            "end": self.end,
            "duration": max(0.0, self.end - self.start),
            "status": self.status,
            "failed": self.status in FAILED,
            "call_id": self.call_id,
            "approval_id": self.approval_id,
            "interrupt_id": self.interrupt_id,
            "audit_seqs": self.audit,
            "detail": self.detail,
        }


ApprovalOf = Callable[[str], "Approval | None"]
"""The approval that answered an interrupt (by the interrupt's id in this session)."""


class _Builder:
    def __init__(
        self, session_id: str, shown: ShownSession, approval_of: ApprovalOf, masker: Masker | None
    ) -> None:
        self.session_id = session_id
        self.shown = shown
        self.masker = masker
        self.approval_of = approval_of  # decisions only: no arguments
        self.position = 0  # index of the next message in the transcript
        self.model: str | None = None  # the run's model (its start entry says)
        self.switched: str | None = None  # the model a fallback moved this run to
        self.steps: list[_Step] = []
        self.tools: dict[str, _Step] = {}
        self.interrupts: dict[str, _Step] = {}
        self.cursor: float | None = None
        self.run: _Step | None = None
        self.suspended: _Step | None = None
        self.broken: list[int] = []
        self.unknown: dict[str, list[int]] = {}
        """Entries of a kind (or ``audit`` record) this timeline does not know, by kind."""
        self.open = False  # a run started and has not ended nor suspended (yet)
        self.last_at: float | None = None  # the last entry the current run's process wrote

    def add(self, kind: str, title: str, start: float, end: float, **kw: Any) -> _Step:
        step = _Step(kind, title, start, end, len(self.steps), **kw)
        self.steps.append(step)
        return step

    def scrub(self, value: Any) -> Any:
        return value if self.masker is None else self.masker.scrub(value)

    def arguments(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.masker is None:
            return arguments
        return self.masker.arguments(tool, dict(arguments))

    # -- journal entries ------------------------------------------------------------------

    def entry(self, e: Entry) -> None:
        handler = getattr(self, "_" + e.kind, None)
        if handler is None:
            if e.kind not in UNSHOWN:
                self.unknown.setdefault(e.kind, []).append(e.seq)
        else:
            try:
                handler(e)
            except (KeyError, TypeError, ValueError, AttributeError):
                self.broken.append(e.seq)  # shown as such, the rest of the timeline still is
        if e.kind != "interrupt_answered":  # the resuming process writes the answers
            self.last_at = e.at

    def _cut_off(self, at: float) -> None:
        """The running run's process died after its last entry (``at``): its calls that
        started and have no result are in doubt from then, their duration ends there."""
        for step in self.tools.values():
            if step.status == "running":
                step.status = "in_doubt"
                step.end = max(step.start, at)
        end = self.add("end", "run cut off (its process died)", at, at)
        end.status = "crashed"
        end.detail = {"reason": "the next run started without this one ending"}
        if self.run is not None:
            self.run.end = max(self.run.start, at)
        self.run, self.open = None, False

    def _status(self, e: Entry) -> None:
        status = str(e.data["status"])
        if status == "running":
            started = float(e.data.get("started_at") or e.at)
            by = e.data.get("by")
            if self.open and self.last_at is not None:
                self._cut_off(self.last_at)
            self.open = True
            if self.suspended is not None:
                gap = self.add("wait", "waiting for a human", self.suspended.start, started)
                gap.status = "waiting"
                self.suspended = None
            resumed = bool(e.data.get("resume"))
            agent = e.data.get("agent")  # Agent.name, when the agent has one
            title = ("resumed" if resumed else "run started") + (f" by {by}" if by else "")
            title += f" (agent {self.scrub(agent)})" if agent else ""
            self.run = self.add("run", title, started, started, seq=e.seq)
            model = e.data.get("model")
            self.model = None if model is None else str(model)
            self.switched = None  # a FallbackChain starts each run at its first model
            self.run.detail = {"by": by, "resume": resumed, "model": self.model}
            if agent:
                self.run.detail["agent"] = self.scrub(agent)
            self.cursor = started
            return
        reason = self.scrub(e.data.get("reason"))
        self.open = False
        if status == "suspended":
            self.suspended = self.add("suspend", "suspended", e.at, e.at, seq=e.seq)
            self.suspended.status = "suspended"
            self.suspended.detail = {"reason": reason}
        else:
            step = self.add("end", f"run {status}", e.at, e.at, seq=e.seq)
            step.status = "failed" if status == "failed" else status
            step.detail = {"reason": reason}
        if self.run is not None:
            self.run.end = e.at
        self.cursor = e.at

    def _message(self, e: Entry) -> None:
        from tether.messages import Message

        message = Message.from_dict(e.data["message"])
        position = self.position
        self.position += 1
        start = self.cursor if self.cursor is not None else e.at
        if message.role == "assistant":
            usage = message.usage
            calls = message.tool_calls
            names = ", ".join(c.name for c in calls)
            attempts = self._attempts(e.data.get("failover"))
            title = "model call" + (f" → {names}" if names else "")
            if attempts["attempts"] > 1:
                title += f" ({attempts['attempts']} attempts, answered by {attempts['model']})"
            step = self.add("model", title, start, e.at)
            step.seq = e.seq
            step.status = "retried" if attempts["attempts"] > 1 else "ok"
            step.detail = {
                "input_tokens": 0 if usage is None else usage.input_tokens,
                "output_tokens": 0 if usage is None else usage.output_tokens,
                "cost": None if usage is None or usage.cost is None else str(usage.cost),
                **attempts,
                "text": clip(self.scrub(message.text)),
                "tool_calls": [c.id for c in calls],
            }
            for call in calls:
                tool = self.add("tool", call.name, e.at, e.at, seq=e.seq, call_id=call.id)
                tool.spawn = child_session_id(self.session_id, call.name, position, call.id)
                tool.status = "pending"
                edit = self.shown.edits.get(call.id)
                tool.detail = {
                    "arguments": self.arguments(call.name, dict(call.arguments)),
                    "edited": None if edit is None else edit.json(),  # what ran, who changed it
                }
                self.tools[call.id] = tool
            self.cursor = e.at
        elif message.role == "tool":
            for result in message.tool_results:
                self._finish(result.tool_call_id, result.status, result.content, e.at)
            self.cursor = e.at
        else:
            text = clip(self.scrub(message.text))
            step = self.add("input", f"{message.role} message", start, start, seq=e.seq)
            step.detail = {"text": text}

    def _attempts(self, failover: Any) -> dict[str, Any]:
        """Attempts, retries and fallbacks of one model call, and the model that answered
        (after a fallback, a FallbackChain stays on that model for the rest of the run)."""
        record = failover if isinstance(failover, dict) else {}
        retries = [self._attempt(r) for r in record.get("retries") or []]
        fallbacks = [self._attempt(f) for f in record.get("fallbacks") or []]
        if fallbacks:
            self.switched = str(fallbacks[-1].get("to"))
        return {
            "attempts": 1 + len(retries) + len(fallbacks),
            "model": self.switched or self.model,
            "retries": retries,
            "fallbacks": fallbacks,
        }

    def _attempt(self, record: dict[str, Any]) -> dict[str, Any]:
        out = dict(record)
        if isinstance(out.get("error"), str):  # a provider's message: shown as any text
            out["error"] = clip(self.scrub(out["error"]))
        return out

    def _compaction(self, e: Entry) -> None:
        from tether.messages import Message

        d = e.data
        first, end = int(d["start"]), int(d["end"])
        summary = d.get("summary")
        text = None if summary is None else Message.from_dict(summary).text
        if text is None:
            marked = "none"
        elif text.startswith(SUMMARY_MARK):
            marked = "summary"
        elif text.startswith(OMITTED_MARK):
            marked = "omitted"
        else:
            marked = "unmarked"  # a hook's replacement without tether's marker
        before, after = d.get("tokens_before"), d.get("tokens_after")
        title = f"context compacted ({d.get('reason')}): ~{before} → ~{after} tokens"
        step = self.add("compaction", title, e.at, e.at, seq=e.seq)
        step.detail = {
            "reason": d.get("reason"),
            "manager": d.get("manager"),
            "tokens_before": before,
            "tokens_after": after,
            "messages": [first, end],
            "summary": marked,
            "summary_text": None if text is None else clip(self.scrub(text)),
        }
        self.cursor = e.at  # the next model call starts after it

    def _tool_intent(self, e: Entry) -> None:
        step = self.tools.get(e.data["call_id"])
        if step is not None and step.status.startswith("in doubt"):  # a retry: its own row
            again = self.add("tool", f"{step.title} (again)", e.at, e.at, seq=e.seq)
            again.call_id, again.spawn = step.call_id, step.spawn
            again.detail = {k: step.detail[k] for k in ("arguments", "edited")}
            step = self.tools[e.data["call_id"]] = again
        if step is not None:
            step.start = e.at
            step.status = "running"
            step.detail["intent_seq"] = e.seq

    def _tool_result(self, e: Entry) -> None:
        r = e.data["result"]
        self._finish(r["tool_call_id"], r.get("status"), r.get("content"), e.at)

    def _finish(self, call_id: str, status: Any, content: Any, at: float) -> None:
        step = self.tools.get(call_id)
        if step is not None and step.status.startswith("in doubt -> "):  # the human's result
            step.detail["result"] = clip(str(self.scrub(content)))
        elif step is not None and step.status == "in_doubt":  # settled without a human
            step.status = f"in doubt -> {status or 'ok'}"  # (the tool's reconcile found it)
            step.detail["result"] = clip(str(self.scrub(content)))
        if step is None or step.status not in ("pending", "running"):
            return
        step.status = str(status or "ok")
        step.end = max(step.start, at)
        step.detail["result"] = clip(str(self.scrub(content)))

    def _interrupt_raised(self, e: Entry) -> None:
        from tether.control.interrupts import Interrupt

        recovered = any(raw.get("source") == "in_doubt" for raw in e.data["interrupts"])
        running = any(s.status == "running" for s in self.tools.values())
        if recovered and running and self.open and self.last_at is not None:
            self._cut_off(self.last_at)  # a recovery raises them (with no run start of its own)
        for raw in e.data["interrupts"]:
            interrupt = Interrupt.from_dict(raw)
            if self.masker is not None:
                interrupt = self.masker.interrupt(interrupt)
            call = interrupt.tool_call
            in_doubt = interrupt.source == "in_doubt"
            title = ("in doubt: " if in_doubt else "interrupt: ") + (
                call.name if call is not None else interrupt.name
            )
            step = self.add("interrupt", title, e.at, e.at, seq=e.seq)
            step.status = "in_doubt" if in_doubt else "waiting"
            doubted = self.tools.get(call.id) if in_doubt and call is not None else None
            if doubted is not None and doubted.status == "running":
                doubted.status = "in_doubt"  # (its process died: _cut_off ended it there)
            step.interrupt_id = interrupt.id
            step.call_id = None if call is None else call.id
            step.detail = {
                "name": interrupt.name,
                "source": interrupt.source,
                "reason": interrupt.reason,
                "approval": None,
                "answer": None,
                "answered_at": None,
            }
            approval = self.approval_of(interrupt.id)
            if approval is not None:
                step.approval_id = approval.id
                step.detail["approval"] = {
                    "id": approval.id,
                    "status": approval.status,
                    "decision": approval.decision,
                    "decided_by": approval.decided_by,
                    "decided_at": approval.decided_at,
                    "note": self.scrub(approval.note),
                    "label": _decided(approval, in_doubt),
                }
            self.interrupts[interrupt.id] = step

    def _interrupt_answered(self, e: Entry) -> None:
        for interrupt_id, answer in e.data["answers"].items():
            step = self.interrupts.get(interrupt_id)
            if step is None:
                continue
            shown = self.scrub(answer)
            if isinstance(shown, dict) and "args" in shown:  # what ran is on the tool row
                edit = self.shown.edits.get(step.call_id or "")
                shown = {**shown, "args": MASK if edit is None else edit.arguments}
            step.detail["answer"] = shown
            step.detail["answered_at"] = e.at
            step.end = e.at
            if step.status == "waiting":
                step.status = "answered"
            elif step.status == "in_doubt":
                step.status = "settled"
                settled = SETTLED.get(_settlement(answer) or "")
                step.detail["settled"] = settled
                doubted = self.tools.get(step.call_id or "")
                if settled is not None and doubted is not None and doubted.status == "in_doubt":
                    doubted.status = f"in doubt -> {settled}"

    def _usage(self, e: Entry) -> None:
        if self.run is not None:
            self.run.detail["usage"] = dict(e.data["usage"])

    def _audit(self, e: Entry) -> None:
        if "agent_hooks" not in e.data:
            if "otel" not in e.data:  # "otel": a traced run's saved context, no step
                self.unknown.setdefault(f"audit {sorted(e.data)}", []).append(e.seq)
            return
        record = e.data["agent_hooks"]
        verdict = record.get("verdict") or {}
        decision = str(verdict.get("decision", "?"))
        point = record.get("interception_point", "?")
        step = self.add("hook", f"AGENT-HOOKS {point}: {decision}", e.at, e.at, seq=e.seq)
        step.status = "denied" if decision == "deny" else "ok"
        step.detail = {
            "decision": decision,
            "reason": self.scrub(verdict.get("reason")),
            "message": self.scrub(verdict.get("message")),
            "decided_by": record.get("decided_by"),
            "resolved_by": record.get("resolved_by"),
            "mode": record.get("mode"),
        }

    # -- audit log --------------------------------------------------------------------------

    def audit_log(self, records: list[AuditRecord]) -> None:
        by_approval = {s.approval_id: s for s in self.steps if s.approval_id}
        verdicts: list[_Step] = []
        for r in records:
            data = r.data
            if r.event == "tool.executed":
                step = self.tools.get(str(data.get("call_id")))
                if step is not None:
                    step.audit.append(r.seq)
                    step.detail["duration_ms"] = data.get("duration_ms")
            elif r.event.startswith("approval."):
                step = by_approval.get(str(data.get("approval_id")))
                if step is not None:
                    step.audit.append(r.seq)
            elif r.event.startswith("interrupt."):
                step = self.interrupts.get(str(data.get("interrupt_id")))
                if step is not None:
                    step.audit.append(r.seq)
            elif r.event == "policy.verdict":
                action = str(data.get("action"))
                title = f"verdict: {action} by {data.get('policy')}"
                order: float = len(self.steps) + len(verdicts)
                at = r.at
                judged = self.tools.get(str(data.get("call_id")))
                if judged is not None and at >= judged.start:
                    # audit records commit with the step they describe (the call's intent):
                    # the verdict came first, so it goes right before the call's row
                    at, order = judged.start, judged.order - 0.5
                step = _Step("verdict", title, at, at, order, call_id=data.get("call_id"))
                step.status = "denied" if action.lower() == "deny" else "ok"
                step.detail = {k: self.scrub(data.get(k)) for k in AUDIT_FIELDS if k in data}
                step.audit.append(r.seq)
                verdicts.append(step)
        self.steps.extend(verdicts)
        # in time order: a tool call's row moves to its intent (after a wait for a human),
        # a verdict (timed by the audit log) lands between the model call and the tool
        self.steps.sort(key=lambda s: (s.start, s.order))


def _settlement(answer: Any) -> str | None:
    """retry, skip or abort: an in-doubt answer's kind (None: not one)."""
    if isinstance(answer, dict) and "skip" in answer:
        return "skip"
    return answer if answer in ("retry", "abort", "skip") else None


def _decided(approval: Approval, in_doubt: bool) -> str | None:
    """An approval's decision for people: ``approved by alice``; an in-doubt call's says
    what became of the call (``skipped by alice``: a ``respond`` with ``{"skip": ...}``)."""
    if approval.status == "pending":
        return None
    what: str = approval.status
    if in_doubt:
        decision = approval.on_expiry if approval.status == "expired" else approval.decision
        if decision == "respond":
            what = SETTLED.get(_settlement(approval.response) or "", "answered")
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


def _union(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


@dataclass
class _Tree:
    """One session's rows, and its sub-agents' sessions by child session id."""

    session_id: str
    status: str
    steps: list[_Step]
    broken: list[int]
    children: dict[str, _Tree] = field(default_factory=dict)
    error: str | None = None
    unknown: dict[str, list[int]] = field(default_factory=dict)
    """Why this (child) session's rows could not be built."""


Row = tuple[_Step, int, "int | None", str]
"""A step, its depth, the index of the row it is nested under, its session id."""


def _rows(
    record: SessionRecord,
    entries: list[Entry],
    shown: ShownSession,
    approval_of: ApprovalOf,
    audit: list[AuditRecord],
) -> _Builder:
    b = _Builder(record.session_id, shown, approval_of, shown.masker)
    for e in entries:
        b.entry(e)
    if b.suspended is not None:  # still waiting: the gap runs until now (the last update)
        end = max(record.updated_at, b.suspended.start)
        b.add("wait", "waiting for a human", b.suspended.start, end).status = "waiting"
    b.audit_log(audit)
    return b


def _flatten(tree: _Tree, depth: int, parent: int | None, out: list[Row]) -> None:
    """Rows in order, each sub-agent's rows right under the tool call that ran it."""
    for step in tree.steps:
        index = len(out)
        out.append((step, depth, parent, tree.session_id))
        child = tree.children.pop(step.spawn, None) if step.spawn is not None else None
        if child is None:
            continue
        step.detail["child_session"] = {
            "session_id": child.session_id,
            "status": child.status,
            "steps": len(child.steps),
            "unreadable_entries": child.broken,
            "notes": notes(child.broken, child.unknown),
            "error": child.error,
        }
        _flatten(child, depth + 1, index, out)


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
    b = _rows(record, entries, shown, by_interrupt.get, audit)
    return _json(
        record, _Tree(record.session_id, record.status, b.steps, b.broken, unknown=b.unknown)
    )


def _json(record: SessionRecord, tree: _Tree) -> dict[str, Any]:
    rows: list[Row] = []
    broken = tree.broken
    _flatten(tree, 0, None, rows)
    steps = [r[0] for r in rows]
    top = [s for s, depth, _, _ in rows if depth == 0]
    start = min((s.start for s in steps), default=record.created_at)
    end = max((s.end for s in steps), default=record.updated_at)
    # a sub-agent's time is inside its tool call's: the split counts the top level only;
    # each moment counts once (waiting first, then tools, then the model): shares <= 100 %
    waits = sorted((s.start, s.end) for s in top if s.kind == "wait")
    tool_spans = [(s.start, s.end) for s in top if s.kind == "tool"]
    model_spans = [(s.start, s.end) for s in top if s.kind == "model"]
    waiting = _union(waits)
    tools = _union(waits + tool_spans) - waiting
    model = _union(waits + tool_spans + model_spans) - waiting - tools
    total = max(0.0, end - start)
    calls = []
    cumulative = 0
    spent: Decimal | None = None
    for index, (s, depth, _, session) in enumerate(rows):
        if s.kind == "model":
            tokens_in, tokens_out = s.detail["input_tokens"], s.detail["output_tokens"]
            cumulative += tokens_in + tokens_out
            cost = s.detail["cost"]
            spent = add_cost(spent, None if cost is None else Decimal(cost))
            calls.append(
                {
                    "step": index,
                    "input": tokens_in,
                    "output": tokens_out,
                    "cumulative": cumulative,
                    "cost": cost,
                    "depth": depth,
                    "session_id": session,
                }
            )
    return {
        "session_id": record.session_id,
        "status": record.status,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "start": start,
        "end": end,
        "steps": [s.json(i, depth, parent, sid) for i, (s, depth, parent, sid) in enumerate(rows)],
        "axis": _axis(steps, waits, start, total - waiting),
        "usage": {
            "calls": calls,
            "total_tokens": cumulative,
            "cost": None if spent is None else str(spent),
        },
        "time_split": {
            "model": model,
            "tools": tools,
            "waiting": waiting,
            "tether": max(0.0, total - model - tools - waiting),
            "total": total,
        },
        "unreadable_entries": broken,
        "notes": notes(broken, tree.unknown),
    }


def _axis(
    steps: list[_Step], waits: list[tuple[float, float]], start: float, active: float
) -> dict[str, Any]:
    """Each step's place on a time axis where every wait for a human is compressed to a
    short fixed width (the real wait is in the step): ``[{x, w}]`` in compressed seconds."""
    squeeze = max(active * 0.04, 0.001)

    def at(t: float) -> float:
        shift = 0.0
        for w_start, w_end in waits:
            if t <= w_start:
                break
            real = w_end - w_start
            inside = min(t, w_end) - w_start
            shown = min(real, squeeze)
            shift += inside - (inside * shown / real if real > 0 else 0.0)
        return t - start - shift

    places = [{"x": at(s.start), "w": max(0.0, at(s.end) - at(s.start))} for s in steps]
    return {"places": places, "length": max((p["x"] + p["w"] for p in places), default=0.0)}


def timeline_of(data: TimelineData, redactor: Redactor | None = None) -> dict[str, Any]:
    """THE timeline of a session (API, page and ``tether sessions timeline``): the whole
    journal folded and shown through :func:`~tether.governance.redaction.show_session`, with
    its sub-agents' sessions nested under the calls that ran them. Raises
    KeyError/ValueError/TypeError for a journal the fold cannot use (a child's such
    journal is named on its tool call's row instead)."""
    from tether.governance.redaction import tree_masks

    by_interrupt = {a.interrupt_id: a for a in data.approvals}
    masks = tree_masks(_sessions(data), redactor)  # what any session of the tree masks
    return _json(data.record, _tree(data, redactor, by_interrupt.get, masks))


def _sessions(data: TimelineData) -> list[tuple[SessionRecord, list[Approval]]]:
    found = [(data.record, data.approvals)]
    for child in data.children.values():
        found += _sessions(child)
    return found


def _tree(
    data: TimelineData, redactor: Redactor | None, approval_of: ApprovalOf, masks: TreeMasks
) -> _Tree:
    from tether.governance.redaction import show_session
    from tether.session import fold

    record = data.record
    shown = show_session(record, fold(record), data.approvals, redactor=redactor, tree=masks)
    b = _rows(record, record.entries, shown, approval_of, data.audit)
    tree = _Tree(record.session_id, record.status, b.steps, b.broken, unknown=b.unknown)
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
            tree.children[sid] = _Tree(sid, child.record.status, [], [], error=error)
    return tree
