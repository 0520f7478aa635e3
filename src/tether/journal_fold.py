"""The fold of a session's journal: the SessionView a load (or a snapshot) rebuilds.

What each entry kind holds is described in :mod:`tether.session`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tether.context.compaction import Compaction
from tether.control.interrupts import Interrupt, interrupt_id
from tether.messages import JSONValue, Message, ToolCall, ToolResult
from tether.result import StopReason
from tether.state_delta import apply_delta
from tether.suspension import Suspension

if TYPE_CHECKING:
    from tether.durable import SessionRecord
    from tether.durable.entries import Entry

IN_DOUBT = "in_doubt"
"""Name, point and source of the interrupt raised for a tool call a crash left in doubt."""


@dataclass(slots=True)
class SessionView:
    """A session as the fold of its journal."""

    messages: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, JSONValue] = field(default_factory=dict)
    status: str = "idle"
    pending: tuple[list[ToolCall], list[ToolResult | None]] | None = None
    position: int = 0
    intents: set[str] = field(default_factory=set)
    interrupts: list[Interrupt] = field(default_factory=list)
    suspended_reason: str | None = None
    stop_reason: str | None = None
    """How the last run that ended (not suspended) stopped, and its ``end_reason``: None
    before one did (or in a journal from before they were written)."""
    end_reason: str | None = None
    compaction: Compaction | None = None
    system_prompt: str | None = None
    system_prompt_known: bool = False
    session_id: str | None = None
    """Set by :func:`fold`: in-doubt interrupt ids name their session."""

    @property
    def suspension(self) -> Suspension | None:
        """The suspension to resume, when the last run stopped with interrupt/paused."""
        if self.status != "suspended":
            return None
        stop: StopReason = "paused" if self.suspended_reason == "paused" else "interrupt"
        # Every started call without a saved result, not only those of the last in_doubt
        # interrupt: a call settled by an earlier answer ("skip") has no tool_result entry
        # until its batch closes, and must not re-run after a second crash.
        doubted = [c.id for c in self.in_doubt()]
        return Suspension(list(self.interrupts), self.pending, self.position, stop, doubted)

    def in_doubt(self) -> list[ToolCall]:
        """Calls of the open batch that started (intent) but have no result."""
        if self.pending is None:
            return []
        calls, results = self.pending
        return [
            c for c, r in zip(calls, results, strict=True) if r is None and c.id in self.intents
        ]

    def apply(self, entry: Entry) -> None:
        """Fold one entry into the view."""
        data = entry.data
        kind = entry.kind
        if kind == "message":
            message = Message.from_dict(data["message"])
            self.messages.append(message)
            if message.role == "assistant" and message.tool_calls:
                calls = message.tool_calls
                self.pending = (calls, [None] * len(calls))
                self.position = len(self.messages) - 1
                self.intents = set()
            elif message.role == "tool":
                self.pending = None
                self.intents = set()
            if self.status == "running":  # past the suspension's batch (or model call)
                self.interrupts = []
        elif kind == "tool_intent":
            self.intents.add(data["call_id"])
            # A new attempt consumes the answer to the call's in_doubt interrupt: if this
            # attempt is cut off too, a human must decide again (a stale "retry" would
            # repeat a side effect that may have happened).
            for session in {self.session_id, None}:  # (None: a journal from before binding)
                key = interrupt_id(IN_DOUBT, self.position, data["call_id"], IN_DOUBT, session)
                self.answers.pop(key, None)
        elif kind == "tool_result":
            self._set_result(ToolResult(**data["result"]))
        elif kind == "interrupt_raised":
            self.interrupts = [Interrupt.from_dict(i) for i in data["interrupts"]]
            self.suspended_reason = data.get("stop_reason")
            # a call that stopped at its interrupt() re-runs on resume: not in doubt
            self.intents -= {
                i.tool_call.id
                for i in self.interrupts
                if i.tool_call is not None and i.source != "in_doubt"
            }
        elif kind == "interrupt_answered":
            self.answers.update(data["answers"])
        elif kind == "state":
            if "delta" in data:
                self.state = apply_delta(self.state, data["delta"])
            else:
                self.state = dict(data["state"])
        elif kind == "status":
            self.status = data["status"]
            # A resume that ran the answered calls keeps the unanswered ones pending while
            # it runs: a crash then still shows them (targeted resume).
            if self.status == "running":
                self.interrupts = [i for i in self.interrupts if i.id not in self.answers]
            elif self.status != "suspended":
                self.interrupts = []
            if "stop_reason" in data:  # a run's end
                self.stop_reason, self.end_reason = data["stop_reason"], data.get("reason")
        elif kind == "compaction":
            self.compaction = Compaction.from_dict(data)
        elif kind == "system_prompt":
            self.system_prompt = data.get("system_prompt")
            self.system_prompt_known = True
        elif kind == "snapshot":
            self.load_snapshot(data)

    def add_snapshot_messages(self, data: dict[str, Any]) -> None:
        """A snapshot's messages: they replace those from its ``messages_from`` on (0 for a
        snapshot written before snapshots became incremental, which holds all of them)."""
        start = data.get("messages_from", 0)
        self.messages = self.messages[:start] + [Message.from_dict(m) for m in data["messages"]]

    def _set_result(self, result: ToolResult) -> None:
        if self.pending is None:
            return
        calls, results = self.pending
        for index, call in enumerate(calls):
            if call.id == result.tool_call_id:
                results[index] = result

    def to_snapshot(self, messages_from: int = 0) -> dict[str, Any]:
        """The snapshot entry's data, holding the messages from index ``messages_from`` on
        (the ones before are in earlier snapshots)."""
        pending = None
        if self.pending is not None:
            calls, results = self.pending
            pending = {
                "calls": [c.id for c in calls],
                "results": [None if r is None else result_dict(r) for r in results],
            }
        return {
            "message_count": len(self.messages),
            "messages_from": messages_from,
            "messages": [m.to_dict() for m in self.messages[messages_from:]],
            "state": self.state,
            "answers": self.answers,
            "status": self.status,
            "pending": pending,
            "position": self.position,
            "intents": sorted(self.intents),
            "interrupts": [i.to_dict() for i in self.interrupts],
            "suspended_reason": self.suspended_reason,
            "stop_reason": self.stop_reason,
            "end_reason": self.end_reason,
            "compaction": None if self.compaction is None else self.compaction.to_dict(),
            "system_prompt": self.system_prompt,
            "system_prompt_known": self.system_prompt_known,
        }

    def load_snapshot(self, data: dict[str, Any]) -> None:
        """Take a snapshot's fold (its messages follow those of the earlier snapshots, already
        in ``self.messages``)."""
        self.add_snapshot_messages(data)
        self.state = dict(data["state"])
        self.answers = dict(data["answers"])
        self.status = data["status"]
        self.position = data["position"]
        self.intents = set(data["intents"])
        self.interrupts = [Interrupt.from_dict(i) for i in data["interrupts"]]
        self.suspended_reason = data.get("suspended_reason")
        self.stop_reason, self.end_reason = data.get("stop_reason"), data.get("end_reason")
        compaction = data.get("compaction")
        self.compaction = None if compaction is None else Compaction.from_dict(compaction)
        self.system_prompt = data.get("system_prompt")
        self.system_prompt_known = bool(data.get("system_prompt_known", False))
        self.pending = None
        snap = data.get("pending")
        if snap is not None:
            calls = self.messages[self.position].tool_calls
            results = [None if r is None else ToolResult(**r) for r in snap["results"]]
            self.pending = (calls, results)


def fold(record: SessionRecord) -> SessionView:
    """The view of a loaded session (snapshot, then the entries after it)."""
    view = SessionView(session_id=record.session_id)
    if record.snapshot is not None:
        for earlier in record.earlier_snapshots:
            view.add_snapshot_messages(earlier.data)
        view.load_snapshot(record.snapshot.data)
    for entry in record.entries:
        view.apply(entry)
    return view


def result_dict(result: ToolResult) -> dict[str, Any]:
    """A tool result as a journal entry (and a snapshot) holds it."""
    return {
        "tool_call_id": result.tool_call_id,
        "name": result.name,
        "content": result.content,
        "is_error": result.is_error,
        "status": result.status,
    }
