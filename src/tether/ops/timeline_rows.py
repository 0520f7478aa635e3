"""A session's journal entries turned into timeline rows, one handler per entry kind
(the times they carry, and their limits, are in :mod:`tether.ops.timeline`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from tether.agents.addresses import child_session_id
from tether.context.compaction import OMITTED_MARK, SUMMARY_MARK
from tether.governance.masks import MASK
from tether.ops.timeline_labels import SETTLED, decided, settlement
from tether.ops.timeline_step import ApprovalOf, Step, clip

if TYPE_CHECKING:
    from tether.durable import Entry
    from tether.governance.masks import Masker
    from tether.governance.redaction import ShownSession

UNSHOWN: Final = frozenset({"snapshot", "state", "system_prompt"})
"""Entry kinds the timeline knows and shows no row for."""


class RowBuilder:
    """The rows of one session, built entry by entry (:meth:`entry`); a kind it does not
    know, or an entry it cannot read, is counted for the notes instead."""

    def __init__(
        self,
        session_id: str,
        shown: ShownSession,
        approval_of: ApprovalOf,
        masker: Masker | None,
        *,
        path: str = "",
    ) -> None:
        self.session_id = session_id
        self.path = path  # the session's agent path in its tree ("" at the top)
        self.workflow: dict[str, Any] | None = None
        """A workflow's session: its journaled marker (name, kind, nodes' kinds)."""
        self.wf_step = 0  # the workflow's current step in its task
        self.shown = shown
        self.masker = masker
        self.approval_of = approval_of  # decisions only: no arguments
        self.position = 0  # index of the next message in the transcript
        self.model: str | None = None  # the run's model (its start entry says)
        self.switched: str | None = None  # the model a fallback moved this run to
        self.steps: list[Step] = []
        self.tools: dict[str, Step] = {}
        self.interrupts: dict[str, Step] = {}
        self.cursor: float | None = None
        self.run: Step | None = None
        self.suspended: Step | None = None
        self.broken: list[int] = []
        self.unknown: dict[str, list[int]] = {}
        """Entries of a kind (or ``audit`` record) this timeline does not know, by kind."""
        self.open = False  # a run started and has not ended nor suspended (yet)
        self.last_at: float | None = None  # the last entry the current run's process wrote

    def add(self, kind: str, title: str, start: float, end: float, **kw: Any) -> Step:
        step = Step(kind, title, start, end, len(self.steps), **kw)
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
            if self.workflow is not None:  # a resume (a new task's marker follows its start)
                title += f": {self.workflow['kind']} workflow"
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
        if message.role == "assistant" and self.workflow is not None:
            self._decision(message, position, e)
        elif message.role == "assistant":
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
            if self.workflow is not None and not _grace(message.text):
                self.wf_step = 0  # a workflow's new task (its steps count from 1)

    def _decision(self, message: Any, position: int, e: Entry) -> None:
        """A workflow conductor's turn: no model call; a node row per node run it starts,
        or the workflow's answer (see :mod:`tether.ops.timeline_nodes`)."""
        from tether.ops.timeline_nodes import node_row

        assert self.workflow is not None
        calls = message.tool_calls
        if not calls:
            step = self.add("answer", "workflow answer", e.at, e.at, seq=e.seq)
            step.detail = {"text": clip(self.scrub(message.text))}
        else:
            self.wf_step += 1
        for call in calls:
            tool = node_row(self, call, position, e)
            tool.detail["edited"] = None
            edit = self.shown.edits.get(call.id)
            if edit is not None:
                tool.detail["edited"] = edit.json()
            self.tools[call.id] = tool
        self.cursor = e.at

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
            again = self.add(step.kind, f"{step.title} (again)", e.at, e.at, seq=e.seq)
            again.call_id, again.spawn = step.call_id, step.spawn
            kept = ("arguments", "edited", "node", "node_kind", "step", "step_name", "path")
            again.detail = {k: step.detail[k] for k in kept if k in step.detail}
            if step.kind == "node":
                again.detail["interrupts"] = []
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

        recovered = any(  # this session's own (a child's, lifted, has a path in its point)
            raw.get("source") == "in_doubt" and "/" not in str(raw.get("point"))
            for raw in e.data["interrupts"]
        )
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
                # from the top of the tree: review#2/legal#1/confirm:ConfirmWrites
                "address": f"{self.path}/{interrupt.name}" if self.path else interrupt.name,
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
                    "label": decided(approval, in_doubt),
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
                settled = SETTLED.get(settlement(answer) or "")
                step.detail["settled"] = settled
                doubted = self.tools.get(step.call_id or "")
                if settled is not None and doubted is not None and doubted.status == "in_doubt":
                    doubted.status = f"in doubt -> {settled}"

    def _usage(self, e: Entry) -> None:
        if self.run is not None:
            self.run.detail["usage"] = dict(e.data["usage"])

    def _audit(self, e: Entry) -> None:
        from tether.ops.timeline_nodes import MARKER, marked

        if MARKER in e.data:  # a workflow's session (tether/workflows/observing.py)
            marked(self, e.data[MARKER])
            return
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


def _grace(text: str) -> bool:
    """Whether ``text`` is a budget's wrap-up note (not a workflow's new task)."""
    from tether.loop import GRACE_MESSAGE

    return text == GRACE_MESSAGE
