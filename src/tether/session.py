"""The loop's side of durability: journal each step's delta, fold a journal back into a session.

Entry kinds and their data (all JSON, versioned by ``Entry.schema``):

- ``message``: ``{"message": Message.to_dict()}``; an assistant message with tool
  calls opens a batch, the following ``tool`` message closes it. An assistant message
  whose model call needed provider retries or fallbacks also has ``"failover":
  {"retries": [...], "fallbacks": [...]}`` (see :mod:`tether.failover`).
- ``tool_intent``: ``{"call_id", "name"}``, written (durably for non-idempotent
  tools) right before the tool's side effect; an intent without a result after a
  crash is *in doubt*. ``name`` is the tool that runs; when the call that runs differs
  from the model's, also ``"ran": {"arguments", "by"}``: the arguments that run and
  who changed them, in order (``transform:LABEL`` a policy's Transform, ``edit`` an
  approver's edit, ``hook`` another BeforeToolCall hook, ``middleware`` tool
  middleware); the views show it (:mod:`tether.governance.redaction`).
- ``tool_result``: ``{"result": ToolResult}`` as soon as one call of a batch ends.
- ``interrupt_raised``: ``{"interrupts": [...], "stop_reason"}`` (durable).
- ``interrupt_answered``: ``{"answers": {id: value}}``, committed with the resumed run's
  next write, before anything re-runs: in the fsync'd commit of a non-idempotent
  call's intent; fsync'd on its own only when answers are left pending.
- ``state``: ``{"state": {...}}`` or, when smaller, ``{"delta": ...}`` (see
  ``tether.state_delta``) when the session state changed.
- ``status``: ``{"status", "reason"}``; a run's start ``{"status": "running",
  "started_at", "by" (lease holder), "resume", "model" (the agent's model name)}``; ``usage``: ``{"usage": RunUsage.to_dict()}``.
- ``compaction``: ``Compaction.to_dict()`` plus ``reason``, ``manager`` (its class
  name), ``tokens_before``, ``tokens_after``: the model's view of the transcript from now on (the
  messages themselves stay in the journal).
- ``system_prompt``: ``{"system_prompt": str | None}``, the session's system prompt
  (written when a run first sends it or sends a different one).
- ``snapshot``: the whole fold (see :meth:`SessionView.to_snapshot`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tether.context.compaction import Compaction
from tether.control.interrupts import Interrupt, interrupt_id
from tether.eager import run_eagerly
from tether.errors import PersistenceError, TetherError
from tether.messages import JSONValue, Message, ToolCall, ToolResult
from tether.result import StopReason
from tether.state_delta import apply_delta, smaller, state_delta
from tether.suspension import Suspension

if TYPE_CHECKING:
    from tether.durable import Lease, SessionRecord, SessionStatus, Store
    from tether.durable.audit import AuditEvent
    from tether.durable.entries import Entry, JournalKind
    from tether.durable.store import Sidecar

IN_DOUBT = "in_doubt"
"""Name, point and source of the interrupt raised for a tool call a crash left in doubt."""

SNAPSHOT_EVERY = 1000
"""Entries after the last snapshot that trigger a new snapshot at the end of a run.

A snapshot holds the fold (state, answers, the open batch...) and only the messages added
since the snapshot before it (``messages_from`` on): writing one costs what the session's
state and its last 1000 entries cost, not the whole conversation. A load reads every
snapshot (each message is decoded once) and the entries after the last one."""


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
            if self.status != "suspended":
                self.interrupts = []
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
                "results": [None if r is None else _result_dict(r) for r in results],
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


def _result_dict(result: ToolResult) -> dict[str, Any]:
    return {
        "tool_call_id": result.tool_call_id,
        "name": result.name,
        "content": result.content,
        "is_error": result.is_error,
        "status": result.status,
    }


class SessionObserver(Protocol):
    """The agent's AuditTrail as the journal sees it: the records and approvals that commit
    with a run's end (``closing``), and what to do after other suspensions and answers."""

    def closing(
        self,
        session_id: str,
        stop_reason: str,
        reason: str | None,
        usage: dict[str, int],
        interrupts: list[Interrupt],
    ) -> Sidecar: ...
    async def suspended(
        self, session_id: str, interrupts: list[Interrupt], *, again: bool = False
    ) -> None: ...
    async def answered(self, session_id: str, answers: dict[str, Any]) -> None: ...


_RECORDS = ("audit", "interrupt_answered")
"""Queued entries a run that ends early still writes (what happened, not a step)."""


class SessionJournal:
    """Appends a run's deltas to the store under the session's lease (compare-and-set)."""

    def __init__(self, store: Store, session_id: str, version: int, lease: Lease) -> None:
        self.store = store
        self.session_id = session_id
        self.version = version
        self.lease = lease
        self.since_snapshot = 0
        self.snapshot_seq = 0
        """Seq of the session's latest snapshot (0: none)."""
        self._state_json: str | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # parallel tool calls append one at a time (CAS)
        self.failed = False
        """Set after a failed write: the run fails and later writes are skipped."""
        self.observer: SessionObserver | None = None
        """Told about suspensions and answers (the agent's AuditTrail: approvals, audit)."""
        self._deferred: list[tuple[JournalKind, dict[str, Any]]] = []
        self._deferred_status: SessionStatus | None = None
        self._audit: list[AuditEvent] = []
        self.end_recorded = False
        """Whether the run's end went out with its audit records (``journal_end``)."""

    def defer(
        self, kind: JournalKind, data: dict[str, Any], *, status: SessionStatus | None = None
    ) -> None:
        """Queue an entry to go out with the next append (one commit for several steps).

        Only for entries whose loss in a crash is harmless: the run then resumes from
        the last saved step (a model call may repeat; a tool call never silently does,
        since its intent is always written before it runs).
        """
        self._deferred.append((kind, data))
        if status is not None:
            self._deferred_status = status

    def defer_audit(self, items: Sequence[AuditEvent]) -> None:
        """Queue audit records to commit in the next append's transaction: the journal and
        the audit log then agree on what happened, and a step costs one transaction."""
        self._audit.extend(items)

    def take_audit(self) -> list[AuditEvent]:
        """The queued audit records, handed back (after a failed write: to write elsewhere)."""
        items, self._audit = self._audit, []
        return items

    async def flush(self, *, records_only: bool = False) -> None:
        """Write the queued entries and audit records now (no-op when there are none).

        ``records_only`` (a run that ends without its last steps, e.g. abandoned by its
        caller): only the records (audit records, AGENT-HOOKS ``audit`` entries, answers
        given to ``resume``) are written; queued steps are dropped, as a crash would drop
        them."""
        if records_only:
            self._deferred = [(k, d) for k, d in self._deferred if k in _RECORDS]
            self._deferred_status = None
        if self._deferred:
            await self.append_many([])
        elif self._audit and not self.failed:
            items = self.take_audit()
            try:
                await self.store.audit.append_many(items)
            except TetherError as exc:
                raise PersistenceError(
                    f"session {self.session_id}: could not write the audit record(s) "
                    f"{', '.join(i.event for i in items)}: {exc}"
                ) from exc

    async def append(
        self,
        kind: JournalKind,
        data: dict[str, Any],
        *,
        durable: bool = False,
        status: SessionStatus | None = None,
    ) -> None:
        await self.append_many([(kind, data)], durable=durable, status=status)

    async def append_many(
        self,
        entries: Sequence[tuple[JournalKind, dict[str, Any]]],
        *,
        durable: bool = False,
        status: SessionStatus | None = None,
        sidecar: Sidecar | None = None,
    ) -> None:
        """Append ``entries`` (after the queued ones); ``sidecar``'s approvals and audit
        records, and the queued audit records, commit in the same transaction."""
        if self.failed:
            return
        async with self._lock:
            if self._deferred:
                entries = [*self._deferred, *entries]
                status = status or self._deferred_status
                self._deferred = []
                self._deferred_status = None
            if not entries:
                return
            # taken now: records queued while the store call is awaited go with the next one
            audit, self._audit = self._audit, []
            if audit:
                from tether.durable.store import Sidecar

                extra = sidecar or Sidecar()
                sidecar = Sidecar(extra.approvals, [*audit, *extra.audit])
            appending = self.store.append(
                self.session_id,
                self.version,
                entries,
                status=status,
                durable=durable,
                lease=self.lease,
                sidecar=sidecar,
            )
            try:
                if getattr(self.store, "blocks_loop", False):
                    written = await appending  # runs to its end: nothing to cancel mid-write
                else:
                    written = await self._settled(appending)
            except TetherError as exc:
                self.failed = True
                self._audit = [*audit, *self._audit]  # for take_audit(): written elsewhere
                kinds = ", ".join(kind for kind, _ in entries)
                raise PersistenceError(
                    f"session {self.session_id}: could not save the journal entry ({kinds}) at "
                    f"version {self.version + 1}: {exc}. Everything saved before is intact; "
                    "fix the store and call agent.resume() to continue from the last saved step."
                ) from exc
            self.version = written[-1].seq
            self.since_snapshot += len(written)

    async def _settled(self, appending: Awaitable[list[Entry]]) -> list[Entry]:
        """Await a store write that really waits (e.g. PostgreSQL): one handed to the store
        cannot be taken back, so a cancelled caller first learns how it ended (the next
        append's version depends on it), then stops. A write that finishes in its first
        step (a store that ran it inline) needs no task."""
        if inspect.iscoroutine(appending):
            finished, rest = run_eagerly(appending)
            if finished:
                return rest  # type: ignore[return-value]
            appending = rest
        write = asyncio.ensure_future(appending)
        try:
            return await asyncio.shield(write)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                written = await write
                self.version = written[-1].seq
                self.since_snapshot += len(written)
            raise

    async def message(
        self, message: Message, failover: dict[str, list[dict[str, object]]] | None = None
    ) -> None:
        """Save ``message``: a tool message at once (it settles its calls), others queued;
        ``failover``: the retries and fallbacks of the model call that answered it."""
        if message.role == "tool":
            # queued results of this batch are inside the message: do not store them twice
            answered = {r.tool_call_id for r in message.tool_results}
            self._deferred = [
                (kind, data)
                for kind, data in self._deferred
                if not (kind == "tool_result" and data["result"]["tool_call_id"] in answered)
            ]
            await self.append("message", {"message": message.to_dict()})
        elif failover is not None:
            self.defer("message", {"message": message.to_dict(), "failover": failover})
        else:
            self.defer("message", {"message": message.to_dict()})

    async def tool_result(self, result: ToolResult, *, last: bool = False) -> None:
        """Save one call's result; the batch's last result rides with its tool message."""
        if last:
            self.defer("tool_result", {"result": _result_dict(result)})
        else:
            await self.append("tool_result", {"result": _result_dict(result)})

    async def state_if_changed(self, state: dict[str, Any]) -> None:
        """Journal the session state when it differs from what was last written:
        only the delta when that is smaller than the whole state."""
        encoded = json.dumps(state, sort_keys=True, default=repr)
        if encoded == self._state_json:
            return
        previous = self._state_json
        self._state_json = encoded
        if previous is not None:
            delta = state_delta(json.loads(previous), json.loads(encoded))
            if smaller(delta, state):
                self.defer("state", {"delta": delta})
                return
        self.defer("state", {"state": state})

    def remember_state(self, encoded: str | None) -> None:
        """Set the state JSON last written (None: unknown, so the next check writes)."""
        self._state_json = encoded

    @property
    def state_json(self) -> str | None:
        return self._state_json

    def start_heartbeat(self, ttl: float) -> None:
        """Renew the lease every ttl/3 seconds while the run lasts."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(ttl / 3)
                self.lease = await self.store.renew_lease(self.lease, ttl=ttl)

        self._heartbeat = asyncio.get_running_loop().create_task(beat())

    async def close(self) -> None:
        """Stop the heartbeat and release the lease (best effort: it also expires)."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None
        with contextlib.suppress(TetherError):  # the lease expires on its own
            await self.store.release_lease(self.lease)


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
            journal.session_id, "interrupt", reason, {"model_calls": 0, "tool_calls": 0}, interrupts
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
    entries.append(("status", {"status": status, "reason": reason}))
    sidecar = None
    if journal.observer is not None and not journal.failed:
        raised = view.interrupts if status == "suspended" else []
        sidecar = journal.observer.closing(journal.session_id, stop_reason, reason, usage, raised)
    await journal.append_many(
        entries, durable=status == "suspended", status=status, sidecar=sidecar
    )
    journal.end_recorded = not journal.failed
    if journal.since_snapshot >= SNAPSHOT_EVERY and not journal.failed:
        view.status = status
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
