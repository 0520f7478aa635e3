"""A recorded session as a replay reads it: its user turns, its tool calls (with what
happened to them then), the results of the calls that ran, and its interrupts with
their answers. Built from the journal entry by entry, read-only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from tether.control.interrupts import Interrupt
from tether.evals.policy_recorded import Recorded, audit_verdicts, note
from tether.messages import JSONValue, Message, ToolCall, ToolResult

if TYPE_CHECKING:
    from tether.durable import Approval, Entry, Store

CHUNK: Final = 500
"""Journal entries read at a time."""


@dataclass(slots=True)
class Turn:
    """One invocation of the session: the user messages it began with, its last answer."""

    prompt: list[Message]
    answer: str | None = None
    stop: str | None = None


@dataclass(slots=True)
class Call:
    """One tool call the model asked for, in order, with the turn it belongs to."""

    turn: int
    call: ToolCall


@dataclass(slots=True)
class Run:
    """A call that ran then: the tool that ran, with the arguments it ran with, and its result."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    result: ToolResult


@dataclass(slots=True)
class Asked:
    """A recorded interrupt and the answer it got (``answered`` False: never answered)."""

    interrupt: Interrupt
    answer: JSONValue = None
    answered: bool = False


@dataclass(slots=True)
class Recording:
    """What one session's journal (and audit records) say happened, turn by turn."""

    session_id: str
    turns: list[Turn] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    recorded: Recorded = field(default_factory=Recorded)
    results: dict[str, ToolResult] = field(default_factory=dict)
    approvals: list[Approval] = field(default_factory=list)

    @property
    def interrupt_calls(self) -> dict[str, ToolCall | None]:
        """Interrupt id -> the call it asked about (what ``learned_masks`` takes)."""
        return {a.interrupt.id: a.interrupt.tool_call for a in self.asked}


async def read_recording(store: Store, session_id: str) -> Recording | None:
    """The session's recording (None: the store has no such session). Only reads."""
    from tether.durable.errors import SessionNotFound

    try:
        first = await store.read_entries(session_id, 0, until_seq=1)
    except SessionNotFound:
        return None
    if not first and await store.load(session_id) is None:  # a store that reads none for it
        return None
    builder = _Builder(Recording(session_id))
    after = 0
    while True:
        entries = await store.read_entries(session_id, after, until_seq=after + CHUNK)
        for entry in entries:
            builder.apply(entry)
        if len(entries) < CHUNK:  # seqs are dense: a short chunk is the journal's end
            break
        after = entries[-1].seq
    recording = builder.finish()
    await audit_verdicts(store, session_id, recording.recorded)
    if recording.asked:  # approval rows are filed for interrupts only
        recording.approvals = await store.approvals.find(session_id=session_id, limit=10_000)
    return recording


class _Builder:
    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.starting = False  # a run began: the user messages that follow are its prompt
        self.intents: dict[str, tuple[str, dict[str, Any] | None]] = {}
        self.by_id: dict[str, ToolCall] = {}
        self.by_interrupt: dict[str, Asked] = {}

    def apply(self, entry: Entry) -> None:
        recording, data = self.recording, entry.data
        note(recording.recorded, entry.kind, data)
        if entry.kind == "status":
            if data.get("status") == "running" and not data.get("resume"):
                recording.turns.append(Turn([]))
                self.starting = True
            elif recording.turns and data.get("status") != "running":
                recording.turns[-1].stop = str(data.get("status"))
            return
        if entry.kind == "message":
            self.message(Message.from_dict(data["message"]))
        elif entry.kind == "tool_result":
            block = {**data["result"], "type": "tool_result"}
            for result in Message.from_dict({"role": "tool", "content": [block]}).tool_results:
                recording.results[result.tool_call_id] = result
        elif entry.kind == "tool_intent":
            ran = data.get("ran")
            arguments = ran.get("arguments") if isinstance(ran, dict) else None
            self.intents[str(data["call_id"])] = (
                str(data["name"]),
                dict(arguments) if isinstance(arguments, dict) else None,
            )
        elif entry.kind == "interrupt_raised":
            for item in data.get("interrupts") or ():
                asked = Asked(Interrupt.from_dict(item))
                if asked.interrupt.id not in self.by_interrupt:
                    self.by_interrupt[asked.interrupt.id] = asked
                    recording.asked.append(asked)
        elif entry.kind == "interrupt_answered":
            for key, value in (data.get("answers") or {}).items():
                found = self.by_interrupt.get(str(key))
                if found is not None:
                    found.answer, found.answered = value, True

    def message(self, message: Message) -> None:
        recording = self.recording
        if message.role == "user" and self.starting and recording.turns:
            recording.turns[-1].prompt.append(message)
            return
        self.starting = False
        if not recording.turns:  # a journal that does not start with a run's status
            recording.turns.append(Turn([]))
        if message.role == "assistant":
            if message.text.strip():
                recording.turns[-1].answer = message.text
            for call in message.tool_calls:
                recording.calls.append(Call(len(recording.turns) - 1, call))
                self.by_id[call.id] = call
        elif message.role == "tool":
            for result in message.tool_results:
                recording.results[result.tool_call_id] = result

    def finish(self) -> Recording:
        recording = self.recording
        for call in recording.calls:
            intent = self.intents.get(call.call.id)
            result = recording.results.get(call.call.id)
            if intent is None or result is None:
                continue  # it never ran then (denied, guided, unknown, bad arguments...)
            tool, ran = intent
            arguments = ran if ran is not None else dict(call.call.arguments)
            recording.runs.append(Run(call.call.id, tool, arguments, result))
        return recording
