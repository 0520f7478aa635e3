"""The policy what-if: what an agent's policy would do to every tool call a store recorded.

:func:`check_policy` reads the store's sessions page by page and each journal in chunks,
folding it entry by entry (:class:`tether.session.SessionView`), so each recorded call is
judged with the conversation and state it had. For every call it emits a
``BeforeToolCall`` (the model's call as journaled, the agent's tool for its name, an
``Interrupter`` with no answers) on a copy of the agent's hook registry: the agent's
interventions, AGENT-HOOKS interceptors and other ``BeforeToolCall`` hooks run exactly as
at run time. Nothing runs a tool or a model, and nothing is written:

- the copy leaves out the agent's audit trail (it would write ``policy.verdict``
  records to the agent's store) and the run's ``confirm`` callback is not given: a
  Confirm asks the interrupter, which raises; that ``InterruptSignal`` is the verdict
  ``confirm`` (nobody is asked);
- an AGENT-HOOKS host gets one caller-owned session per recorded session
  (``start_session`` / ``end_session``); a denied startup denies every call of it.

The verdicts: ``deny`` (the call would not run: a Deny, a hook's ``cancel_tool`` or
``block``, an AGENT-HOOKS deny), ``guide`` (not run; the model gets a policy's Guide),
``confirm``, ``transform`` (it would run with other arguments or another tool),
``error`` (a policy raised: the run would fail), ``proceed``. What happened then comes
from the journal (the result's status, a policy's or hook's question raised for the call,
the ``ran`` record of its intent) and the session's ``policy.verdict`` audit records
(:mod:`tether.evals.policy_recorded`). Every argument
and reason in the report is redacted through :mod:`tether.governance.masks`, as every
view of a session is.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from datetime import datetime
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Final

from tether.control.events import BeforeToolCall, PolicyVerdict
from tether.control.interrupts import Interrupt, Interrupter, InterruptSignal
from tether.control.registry import HookRegistry
from tether.errors import ConfigurationError, InputError, TetherError
from tether.evals.policy_recorded import Recorded, audit_verdicts, note
from tether.evals.policy_report import (
    VERDICTS,
    CallCheck,
    PolicyReport,
    SessionFailure,
    ToolCounts,
)
from tether.governance.masks import Masker, learned_masks
from tether.governance.redaction import redactor_of
from tether.messages import ToolCall
from tether.session import SessionView

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.durable import Store
    from tether.runtime import Runtime

__all__ = [
    "VERDICTS",
    "CallCheck",
    "PolicyReport",
    "SessionFailure",
    "ToolCounts",
    "check_policy",
]

PAGE: Final = 100
"""Sessions read per ``session_page``."""
CHUNK: Final = 500
"""Journal entries read at a time."""
MAX_ROWS: Final = 10_000
"""Rows a report lists (the counts cover every call; ``rows_left_off`` says how many more)."""
_SEARCH_MAX: Final = 200
_REPR_MAX: Final = 1000


async def check_policy(
    store: Store,
    agent: Agent,
    *,
    since: datetime | float | None = None,
    session_glob: str | None = None,
    max_rows: int = MAX_ROWS,
) -> PolicyReport:
    """What ``agent``'s policy would do to every tool call recorded in ``store`` (see the
    module docstring). ``since``: only calls asked for at or after it (a datetime or epoch
    seconds); ``session_glob``: only sessions whose id matches (``fnmatch``, case-sensitive).
    Reads only; runs no tool and no model."""
    from tether.agent import Agent

    if not isinstance(agent, Agent):
        raise ConfigurationError(
            f"check_policy(store, agent): agent must be an Agent, got {type(agent).__name__}"
        )
    if since is not None and (
        isinstance(since, bool) or not isinstance(since, datetime | int | float)
    ):
        raise InputError(
            f"since must be a datetime or epoch seconds, got {type(since).__name__} {since!r}"
        )
    if session_glob is not None and not isinstance(session_glob, str):
        raise InputError(f"session_glob must be a string, got {type(session_glob).__name__}")
    began = time.perf_counter()
    cutoff = since.timestamp() if isinstance(since, datetime) else since
    checker = _Checker(agent)
    report = PolicyReport()
    search = _literal(session_glob)
    previous: set[str] = set()  # a session that moved one page down is not read twice
    offset = 0
    while True:
        page = await store.session_page(search=search, offset=offset, limit=PAGE)
        current = {s.session_id for s in page.sessions}
        for stats in page.sessions:
            sid = stats.session_id
            if sid in previous or (session_glob is not None and not fnmatchcase(sid, session_glob)):
                continue
            if cutoff is not None and stats.updated_at < cutoff:
                continue
            report.sessions += 1
            try:
                checks = await checker.session(store, sid, cutoff)
            except (TetherError, KeyError, TypeError, ValueError, AttributeError) as exc:
                report.failures.append(SessionFailure(sid, f"{type(exc).__name__}: {exc}"))
                continue
            for check in checks:
                report.add(check, max_rows)
        offset += len(page.sessions)
        if not page.sessions or offset >= page.total:
            break
        previous = current
    report.seconds = time.perf_counter() - began
    return report


def _literal(glob: str | None) -> str | None:
    """The longest run of a glob outside its wildcards and ``[...]`` sets, which every
    matching id contains: the store's id search narrows the pages by it."""
    if not glob:
        return None
    runs, run, index = [], "", 0
    while index < len(glob):
        char = glob[index]
        if char in "*?":
            runs.append(run)
            run = ""
        elif char == "[":
            end = index + 1
            end += glob[end : end + 1] == "!"
            end += glob[end : end + 1] == "]"  # a "]" first in the set is one of its members
            close = glob.find("]", end)
            if close < 0:
                return None  # fnmatch reads the "[" literally; do not guess
            runs.append(run)
            run = ""
            index = close
        else:
            run += char
        index += 1
    runs.append(run)
    best = max(runs, key=len)
    return best if 0 < len(best) <= _SEARCH_MAX else None


@dataclass(slots=True)
class _Judged:
    now: str
    reason: str = ""
    rewritten: ToolCall | None = None
    policies: tuple[str, ...] = ()


class _AgentView:
    """The AgentRef a checked call's hooks see: the agent's name, the recorded session's id,
    messages and state, and the check's runtime (cancel and steer do nothing)."""

    __slots__ = ("name", "path", "runtime", "session_id", "view")

    def __init__(self, name: str | None, runtime: Runtime, session_id: str, view: SessionView):
        self.name = name
        self.path = ""
        self.runtime = runtime
        self.session_id = session_id
        self.view = view

    @property
    def state(self) -> dict[str, Any]:
        return self.view.state

    @property
    def messages(self) -> list[Any]:
        return self.view.messages

    @property
    def conversation(self) -> Any:
        return None

    def cancel(self) -> None:
        return None

    def steer(self, text: str) -> None:
        return None


class _Checker:
    """Judges recorded calls with one agent's BeforeToolCall hooks (see the module)."""

    def __init__(self, agent: Agent) -> None:
        runtime = agent.runtime
        self.agent = agent
        self.redactor = redactor_of(agent)
        self.actions: list[str] = []
        self.hooks = HookRegistry()
        audit = runtime.audit
        for kind in (BeforeToolCall, PolicyVerdict):
            for order, callback in enumerate(runtime.hooks.callbacks(kind)):
                if audit is not None and getattr(callback, "__self__", None) is audit:
                    continue  # the audit trail writes to the agent's store: the check writes nothing
                self.hooks.add(kind, callback, order)
        self.hooks.add(PolicyVerdict, self._verdict, 10**6)
        self.runtime = runtime.replace(hooks=self.hooks, confirm=None, store=None, audit=None)

    def _verdict(self, verdict: PolicyVerdict) -> None:
        self.actions.append(f"{verdict.policy}:{verdict.action}")

    async def session(self, store: Store, sid: str, cutoff: float | None) -> list[CallCheck]:
        view = SessionView(session_id=sid)
        ref = _AgentView(self.agent.name, self.runtime, sid, view)
        host = self.runtime.agent_hooks
        blocked: str | None = None
        if host is not None:
            record = await host.start_session(ref)
            if not record.proceeds:
                reason = record.verdict.reason or "no reason given"
                blocked = f"denied by AGENT-HOOKS at agent_startup: {reason}"
        recorded = Recorded()
        judged: list[tuple[ToolCall, float, _Judged]] = []
        try:
            after = 0
            while True:
                entries = await store.read_entries(sid, after, until_seq=after + CHUNK)
                if not entries:
                    break
                for entry in entries:
                    view.apply(entry)
                    note(recorded, entry.kind, entry.data)
                    if entry.kind != "message" or (cutoff is not None and entry.at < cutoff):
                        continue
                    message = view.messages[-1]
                    if message.role != "assistant" or not message.tool_calls:
                        continue
                    for call in message.tool_calls:
                        if blocked is not None:
                            outcome = _Judged("deny", blocked)
                        else:
                            outcome = await self._judge(ref, call, view.position)
                        judged.append((call, entry.at, outcome))
                if len(entries) < CHUNK:  # seqs are dense: a short chunk is the journal's end
                    break
                after = entries[-1].seq
        finally:
            if host is not None:
                await host.end_session()
                host.emitter.take_records()  # delivered to the sinks; keep memory flat
        if not judged:
            return []
        await audit_verdicts(store, sid, recorded)
        masks: dict[str, set[str]] = {}
        if recorded.interrupt_calls:  # approval rows are filed for interrupts only
            approvals = await store.approvals.find(session_id=sid, limit=MAX_ROWS)
            masks = learned_masks(approvals, recorded.interrupt_calls)
        masker = Masker(self.redactor, masks, set(self.runtime.hidden))
        for message in view.messages:  # learn every mask first: reasons may quote any call
            for call in message.tool_calls:
                masker.learn(call.name, dict(call.arguments))
        for _, _, outcome in judged:
            if outcome.rewritten is not None:
                masker.learn(outcome.rewritten.name, dict(outcome.rewritten.arguments))
        return [_row(sid, call, at, outcome, recorded, masker) for call, at, outcome in judged]

    async def _judge(self, ref: _AgentView, call: ToolCall, position: int) -> _Judged:
        model = ToolCall(call.id, call.name, copy.deepcopy(call.arguments))
        tool = self.runtime.toolset.by_name.get(call.name)
        interrupter = Interrupter(
            {}, "before_tool_call", position, "hook", model, session=ref.session_id
        )
        event = BeforeToolCall(ref, copy.deepcopy(model), tool, interrupter=interrupter)
        self.actions = []
        try:
            await self.hooks.emit(event)
        except InterruptSignal as signal:
            asked = "; ".join(_question(i) for i in signal.interrupts)
            return _Judged("confirm", f"asks: {asked}", None, tuple(self.actions))
        except TetherError as exc:
            return _Judged("error", f"{type(exc).__name__}: {exc}", None, tuple(self.actions))
        policies = tuple(self.actions)
        if event.block:
            return _Judged("deny", f"{event.block} (the run stops blocked)", None, policies)
        if event.cancel_tool:
            reason = event.cancel_tool
            text = reason if isinstance(reason, str) else "the tool call was cancelled by a hook"
            guided = any(p.endswith(":Guide") for p in policies)
            denied = any(p.endswith(":Deny") for p in policies)
            return _Judged("guide" if guided and not denied else "deny", text, None, policies)
        after = event.tool_call
        if (
            after.name != model.name
            or after.arguments != model.arguments
            or event.selected_tool is not tool
        ):
            by = [label for label, _ in event.transformed] or ["a hook"]
            ran = event.selected_tool.name if event.selected_tool is not None else after.name
            text = f"runs {ran} with the arguments of {', '.join(by)}"
            return _Judged(
                "transform", text, ToolCall(after.id, ran, dict(after.arguments)), policies
            )
        reason = ", ".join(policies)  # e.g. a policy that failed open
        return _Judged("proceed", reason, None, policies)


def _question(interrupt: Interrupt) -> str:
    reason = interrupt.reason
    if isinstance(reason, dict):
        reason = reason.get("reason")
    return f"{interrupt.name} ({reason})" if reason else interrupt.name


def _row(
    sid: str, call: ToolCall, at: float, outcome: _Judged, recorded: Recorded, masker: Masker
) -> CallCheck:
    rewritten = outcome.rewritten
    return CallCheck(
        session_id=sid,
        call_id=call.id,
        tool=call.name,
        at=at,
        then=recorded.then(call.id),
        status=recorded.status.get(call.id, "none"),
        now=outcome.now,
        reason=masker.text(outcome.reason),
        arguments=masker.arguments(call.name, dict(call.arguments)),
        rewritten=None
        if rewritten is None
        else _json_safe(masker.arguments(rewritten.name, dict(rewritten.arguments)), masker),
        policies=outcome.policies,
    )


def _json_safe(arguments: dict[str, Any], masker: Masker) -> dict[str, Any]:
    """A Transform's arguments as JSON can hold them (a value that is not JSON: its repr,
    redacted): the run would refuse to journal them, the report still shows them."""
    if _is_json(arguments):
        return arguments
    return {
        str(k): v if _is_json(v) else masker.text(repr(v)[:_REPR_MAX]) for k, v in arguments.items()
    }


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True
