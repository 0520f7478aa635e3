"""AuditTrail: writes an agent's audit records and files its approval requests.

Installed automatically when the Agent has a store (``agent.audit_sink``); an agent
without a store has none and pays nothing. It is three things at once:

- a HookProvider: ``invocation.start`` / ``invocation.end`` (with ``limit.stop`` and
  ``cancellation`` records when the run stopped that way) and ``tool.executed`` (tool
  name, call id, argument hash, outcome status, duration);
- the interventions' audit sink (``policy.verdict``: point, policy, action; no payloads);
- the session journal's observer: when a run suspends it files one approval per
  interrupt that asks a human (redacted through ``redactor``) and writes
  ``interrupt.raised``; answers become ``interrupt.answered``.

While a run holds the session (``journal`` is set), records are queued on the journal and
commit in its next append's transaction; the run's end (approvals, ``interrupt.raised``,
``invocation.end``) commits with the journal's last append (see ``closing``). So the
journal, the approvals and the audit log agree after any failure, and a step costs one
transaction. Without a journal, or after it failed, records are written on their own.

Extensions (the AGENT-HOOKS host, say) add records with :meth:`AuditTrail.note`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tether.control.events import (
    AfterInvocation,
    AfterToolCall,
    BeforeInvocation,
    BeforeToolCall,
    PolicyVerdict,
)
from tether.control.registry import HookOrder, HookRegistry
from tether.durable.audit import AuditEvent
from tether.durable.errors import StoreUnavailable
from tether.errors import ConfigurationError, PersistenceError, TetherError

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt
    from tether.durable.approval_types import Approval
    from tether.durable.approvals import Redactor
    from tether.durable.store import Sidecar, Store
    from tether.session import SessionJournal
    from tether.tools.toolset import Toolset

DEFAULT_APPROVAL_TTL = 24 * 3600.0
_log = logging.getLogger("tether.audit")
_LIMIT_STOPS = ("limit_", "budget_exhausted")


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """How a durable agent files approvals: ``Agent(approvals=ApprovalPolicy(...))``.

    ``redactor`` shapes the arguments approvers see (default: secret-looking keys
    masked); ``ttl`` is seconds until an undecided approval expires (None: never);
    ``on_expiry`` is what an expired approval becomes ("deny" or "approve").
    """

    redactor: Redactor | None = None
    ttl: float | None = DEFAULT_APPROVAL_TTL
    on_expiry: Literal["deny", "approve"] = "deny"

    def __post_init__(self) -> None:
        if self.on_expiry not in ("deny", "approve"):
            raise ConfigurationError(
                f"ApprovalPolicy(on_expiry=...) must be 'deny' or 'approve', got {self.on_expiry!r}"
            )
        if self.ttl is not None and not self.ttl > 0:
            raise ConfigurationError(
                f"ApprovalPolicy(ttl=...) must be > 0 seconds or None, got {self.ttl}"
            )


class AuditTrail:
    """See the module docstring; ``policy`` comes from ``Agent(approvals=...)``."""

    def __init__(
        self,
        store: Store,
        toolset: Toolset,
        policy: ApprovalPolicy | None = None,
        *,
        files_approvals: bool = True,
    ) -> None:
        policy = policy or ApprovalPolicy()
        self.store = store
        self.toolset = toolset
        self.session_id = ""
        """The session records go to (set when a run opens it; see persistence.py)."""
        self.files_approvals = files_approvals
        """False for a sub-agent: its parent files the approvals of the interrupts it lifts
        (one inbox row per question); the child still writes every audit record."""
        self.redactor = policy.redactor
        self.approval_ttl = policy.ttl
        self.approval_on_expiry = policy.on_expiry
        self.below: dict[str, AuditTrail] = {}
        """The trails of the sub-agents run under this agent, by tool name (:meth:`under`):
        a lifted interrupt's row is filed by the policy of the agent that raised it."""
        self.hidden: set[str] = set()
        """The agent tree's hidden strings (the run's ``Runtime.hidden``), scrubbed from rows."""
        self._learned: set[str] = set()  # sessions whose tree's masks were read from the store
        self._started: dict[str, float] = {}
        self.journal: SessionJournal | None = None
        """The journal of the run holding the session (set while the session is open)."""
        self._in_invocation = False

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add(BeforeInvocation, self._invocation_start, HookOrder.SDK_FIRST)
        registry.add(BeforeToolCall, self._tool_start, HookOrder.SDK_LAST)
        registry.add(AfterToolCall, self._tool_end, HookOrder.SDK_LAST)
        registry.add(AfterInvocation, self._invocation_end, HookOrder.SDK_LAST)
        registry.add(PolicyVerdict, self._verdict, HookOrder.SDK_LAST)

    # -- writing ----------------------------------------------------------------------

    async def note(self, event: str, data: dict[str, Any]) -> None:
        """Append one payload-free record about this agent's session."""
        await self._write([(event, data)])

    async def _write(self, records: list[tuple[str, dict[str, Any]]]) -> None:
        audit = getattr(self.store, "audit", None)
        if audit is None or not records:
            return
        sid = self.session_id
        items: list[AuditEvent] = [AuditEvent(event, data, sid) for event, data in records]
        await self._write_events(audit, items)

    async def write_unjournaled(self, items: list[AuditEvent]) -> None:
        """Records whose journal write failed (best effort: the run already failed)."""
        audit = getattr(self.store, "audit", None)
        if audit is None or not items:
            return
        try:
            await self._write_events(audit, items)
        except PersistenceError as exc:
            _log.warning("%s", exc)

    async def _write_events(self, audit: Any, items: list[AuditEvent]) -> None:
        sid = self.session_id
        journal = self.journal
        if journal is not None:
            if not journal.failed:
                journal.defer_audit(items)
                return
            items = [*journal.take_audit(), *items]  # their journal write failed
        try:
            await audit.append_many(items)
        except StoreUnavailable as exc:  # the run's next journal write fails and says so
            _log.warning("session %s: audit records %s not written: %s", sid, items, exc)
        except TetherError as exc:
            raise PersistenceError(
                f"session {sid}: could not write the audit record(s) "
                f"{', '.join(i.event for i in items)}: {exc}"
            ) from exc

    # -- hooks ------------------------------------------------------------------------

    async def _invocation_start(self, event: BeforeInvocation) -> None:
        self.hidden = event.agent.runtime.hidden
        await self._learn_tree(event.agent)
        self._started.clear()
        self._in_invocation = True
        await self._write([("invocation.start", {"new_messages": len(event.messages)})])

    async def _learn_tree(self, agent: Any) -> None:
        """Once per session, when it already has tool calls: what the masks hid in its
        agent tree's sessions (children run by an earlier process are not run again), so
        the rows this process files are scrubbed of it too."""
        sid = agent.session_id
        if (
            not self.files_approvals
            or sid in self._learned
            or not any(m.tool_calls for m in agent.messages)
        ):
            return
        from tether.governance.redaction_tree import load_tree_masks

        self._learned.add(sid)
        self.hidden |= (await load_tree_masks(self.store, sid, self.redactor)).hidden

    def _tool_start(self, event: BeforeToolCall) -> None:
        self._started[event.tool_call.id] = time.perf_counter()

    async def _tool_end(self, event: AfterToolCall) -> None:
        from tether.durable.approvals import args_sha256

        call, result = event.tool_call, event.result
        began = self._started.pop(call.id, None)
        data = {
            "tool": call.name,
            "call_id": call.id,
            "args_sha256": args_sha256(dict(call.arguments)),
            "status": result.status,
            "is_error": result.is_error,
            "duration_ms": None
            if began is None
            else round((time.perf_counter() - began) * 1000, 3),
        }
        await self._write([("tool.executed", data)])

    async def _invocation_end(self, event: AfterInvocation) -> None:
        self._started.clear()
        self._in_invocation = False
        if self.journal is not None and self.journal.end_recorded:
            return  # written with the journal's end (closing)
        result = event.result
        usage = result.usage
        await self._write(
            _end_records(
                result.stop_reason,
                result.reason,
                usage.model_calls,
                usage.tool_calls,
                [i.id for i in result.interrupts],
            )
        )

    # -- the run's end, in the journal's last append ----------------------------------

    def closing(
        self,
        session_id: str,
        stop_reason: str,
        reason: str | None,
        usage: dict[str, int],
        interrupts: list[Interrupt],
        held: frozenset[str] = frozenset(),
    ) -> Sidecar:
        """The approvals and audit records of a run's end, to commit with its journal end:
        an approval and ``interrupt.raised`` per interrupt, then ``invocation.end``.

        ``held``: interrupts pending before the run that it got no answer for (targeted
        resume). They were raised and filed before: they keep their row whatever its
        status (one decided while the run ran is the human's answer, never asked again);
        the store makes the session ``ready`` when one was decided (``Sidecar.held``).
        """
        from tether.durable.store import Sidecar

        sidecar = Sidecar()
        sidecar.held = [i.id for i in interrupts if i.id in held]
        raised = [i for i in interrupts if i.id not in held]
        for approval, record in self._raised(session_id, raised):
            if approval is not None:
                sidecar.approvals.append(approval)
            sidecar.audit.append(record)
        if self._in_invocation:  # (a recovered run that had already ended has no start)
            ids = [i.id for i in interrupts] if stop_reason == "interrupt" else []
            ends = _end_records(stop_reason, reason, usage["model_calls"], usage["tool_calls"], ids)
            sidecar.audit.extend(AuditEvent(e, d, session_id) for e, d in ends)
        return sidecar

    def _raised(
        self, session_id: str, interrupts: list[Interrupt]
    ) -> list[tuple[tuple[Approval, AuditEvent] | None, AuditEvent]]:
        """Per interrupt: its approval request (when it asks a human) and ``interrupt.raised``."""
        from tether.durable.approvals import APPROVAL_SOURCES
        from tether.governance.approvals import prepare_request

        out: list[tuple[tuple[Approval, AuditEvent] | None, AuditEvent]] = []
        for interrupt in interrupts:
            request = None
            if self.files_approvals and interrupt.source in APPROVAL_SOURCES:
                try:
                    request = prepare_request(session_id, interrupt, **self._filing(interrupt))
                except TetherError as exc:
                    raise PersistenceError(
                        f"session {session_id}: the approval request for interrupt "
                        f"{interrupt.id} could not be made, so the suspension was not saved: "
                        f"{exc}. Fix it and call agent.resume() to suspend again."
                    ) from exc
            data = _raised_data(interrupt, None if request is None else request[0].id)
            out.append((request, AuditEvent("interrupt.raised", data, session_id)))
        return out

    def _filing(self, interrupt: Interrupt) -> dict[str, Any]:
        """How this agent files an approval for ``interrupt`` (both paths file the same):
        by the policy of the sub-agent that raised it (its trail's: every policy on the
        path added up), its arguments scrubbed of the tree's hidden strings."""
        trail = self.raised_in(interrupt)
        return {
            "redactor": self.redactor_for(interrupt),
            "ttl": trail.approval_ttl,
            "on_expiry": trail.approval_on_expiry,
            "server": _server_of(trail.toolset, interrupt),
        }

    def raised_in(self, interrupt: Interrupt) -> AuditTrail:
        """The trail of the sub-agent that raised ``interrupt`` (by its address; this one
        for the agent's own, or when that sub-agent has not run in this process)."""
        from tether.agents.addresses import address

        trail = self
        for where in address(interrupt):
            below = trail.below.get(where.partition("#")[0])
            if below is None:
                break  # the policies found so far
            trail = below
        return trail

    def redactor_for(self, interrupt: Interrupt) -> Redactor:
        """How ``interrupt`` is shown (its row, the protocol hosts): the redactor of every
        agent on its path, then the tree's hidden strings scrubbed out."""
        from tether.governance.masks import Scrubbing

        return Scrubbing(self.raised_in(interrupt).redactor, self.hidden)

    def under(self, own: ApprovalPolicy | None, toolset: Toolset, label: str) -> AuditTrail:
        """The trail of sub-agent ``label`` (its tool's name) run under this agent, with
        its own approval policy ``own``: its records go to this store, its rows are filed
        by the top (:meth:`_filing`) with both policies: the redactors' masks add up, the
        shorter ``ttl`` and ``deny`` on expiry when either says so."""
        from tether.governance.masks import chained

        ttl, on_expiry = self.approval_ttl, self.approval_on_expiry
        if own is not None:
            ttl = own.ttl if ttl is None else ttl if own.ttl is None else min(ttl, own.ttl)
            on_expiry = "approve" if own.on_expiry == on_expiry == "approve" else "deny"
        redactor = chained(None if own is None else own.redactor, self.redactor)
        policy = ApprovalPolicy(redactor, ttl, on_expiry)
        trail = AuditTrail(self.store, toolset, policy, files_approvals=False)
        self.below[label.partition("#")[0]] = trail
        return trail

    # -- interventions' audit sink ------------------------------------------------------

    async def _verdict(self, verdict: PolicyVerdict) -> None:
        """A non-proceed intervention action (Deny, Guide, Confirm, Transform)."""
        call = getattr(verdict.subject, "tool_call", None)
        data = {"point": verdict.point, "policy": verdict.policy, "action": verdict.action}
        if call is not None:
            data |= {"tool": call.name, "call_id": call.id}
        if verdict.error is not None:  # action policy.failed: the policy raised, failed open
            data["error"] = verdict.error
        await self._write([("policy.verdict", data)])

    # -- session journal observer -----------------------------------------------------

    async def suspended(
        self, session_id: str, interrupts: list[Interrupt], *, again: bool = False
    ) -> None:
        """File an approval per interrupt that asks a human; ``again``: only make sure they
        exist (idempotent), without new ``interrupt.raised`` records: an interrupt that has
        a row keeps it whatever its status (one decided in the inbox is not asked again)."""
        from tether.durable.approvals import APPROVAL_SOURCES

        approvals = getattr(self.store, "approvals", None) if self.files_approvals else None
        records: list[tuple[str, dict[str, Any]]] = []
        try:
            filed: set[str] = set()
            if again and approvals is not None:
                rows = await approvals.find(session_id=session_id, limit=10_000)
                filed = {row.interrupt_id for row in rows}
            for interrupt in interrupts:
                approval_id = None
                if interrupt.id in filed:
                    continue
                if approvals is not None and interrupt.source in APPROVAL_SOURCES:
                    approval = await approvals.request(
                        session_id, interrupt, **self._filing(interrupt)
                    )
                    approval_id = approval.id
                records.append(("interrupt.raised", _raised_data(interrupt, approval_id)))
        except TetherError as exc:
            raise PersistenceError(
                f"session {session_id} is suspended, but its approval requests could not be "
                f"saved: {exc}. Calling agent.resume() files them again."
            ) from exc
        if not again:
            await self._write(records)

    async def answered(self, session_id: str, answers: dict[str, Any]) -> None:
        """``interrupt.answered``: which interrupts, and the kind of each answer (no payload)."""
        kinds = {key: answer_kind(value) for key, value in answers.items()}
        await self._write([("interrupt.answered", {"answers": kinds})])


def _end_records(
    stop: str, reason: str | None, model_calls: int, tool_calls: int, interrupts: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """``limit.stop`` / ``cancellation`` when the run stopped that way, then ``invocation.end``."""
    records: list[tuple[str, dict[str, Any]]] = []
    if stop.startswith(_LIMIT_STOPS):
        records.append(("limit.stop", {"stop_reason": stop, "reason": reason}))
    elif stop == "cancelled":
        records.append(("cancellation", {"reason": reason}))
    end = {
        "stop_reason": stop,
        "model_calls": model_calls,
        "tool_calls": tool_calls,
        "interrupts": interrupts,
    }
    records.append(("invocation.end", end))
    return records


def answer_kind(value: Any) -> str:
    """A payload-free summary of an interrupt answer."""
    if value is True or value is False:
        return "approve" if value else "deny"
    if value in ("approve", "deny", "retry", "abort"):
        return str(value)
    if isinstance(value, dict):
        if "skip" in value:
            return "skip"
        if isinstance(value.get("approved"), bool):
            edited = " (edited arguments)" if value.get("args") is not None else ""
            return ("approve" if value["approved"] else "deny") + edited
    return "response"


def _raised_data(interrupt: Interrupt, approval_id: str | None) -> dict[str, Any]:
    """The ``interrupt.raised`` record's data (its arguments only as a hash)."""
    from tether.durable.approvals import args_sha256

    call = interrupt.tool_call
    return {
        "interrupt_id": interrupt.id,
        "name": interrupt.name,
        "source": interrupt.source,
        "tool": None if call is None else call.name,
        "args_sha256": None if call is None else args_sha256(dict(call.arguments)),
        "approval_id": approval_id,
    }


def _server_of(toolset: Toolset, interrupt: Interrupt) -> str | None:
    """The server (an MCP server's label) offering the interrupted call's tool, if any."""
    call = interrupt.tool_call
    tool = toolset.by_name.get(call.name) if call is not None else None
    server = getattr(tool, "server", None)
    return server if isinstance(server, str) else None
