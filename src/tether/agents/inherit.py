"""A child runs under its parent's policy: interventions, AGENT-HOOKS, limits, budget, store.

The child's author may add to the parent's policy, never drop it: every intervention
of the parent (its inherited ones included) runs in the child after the child's own;
the parent's AGENT-HOOKS host is attached when the child has none (a child with a
different host is refused); the parent's limits, confirm callback and approval filing
apply unless the child sets its own limits / confirm; model calls draw on the
parent's iteration budget. The child's sessions live in the parent's store. The tree's
agents share one set of strings the redaction hides (:func:`tree_hidden`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.agents.budget import SharedBudget
from tether.errors import ConfigurationError
from tether.limits import DEFAULT_LIMITS

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.interventions import ConfirmCallback
    from tether.limits import IterationBudget, Limits


@dataclass(slots=True)
class _Own:
    """What the child's author configured, kept so that binding never compounds."""

    budget: IterationBudget | None
    limits: Limits | None
    confirm: ConfirmCallback | None
    interventions: tuple[object, ...]
    registered: set[int] = field(default_factory=set)


_OWN: weakref.WeakKeyDictionary[Agent, _Own] = weakref.WeakKeyDictionary()
_PATHS: weakref.WeakKeyDictionary[Agent, str] = weakref.WeakKeyDictionary()
_HIDDEN: weakref.WeakKeyDictionary[Agent, set[str]] = weakref.WeakKeyDictionary()
_CALLS: weakref.WeakKeyDictionary[Agent, tuple[weakref.ref[Agent], str]] = (
    weakref.WeakKeyDictionary()
)


def tree_hidden(agent: Agent) -> set[str]:
    """The strings the redaction hides in ``agent``'s tree (learned in any of its agents:
    their traces and trajectories hide them all). Shared: add to it, never replace it."""
    hidden = _HIDDEN.get(agent)
    if hidden is None:
        hidden = _HIDDEN[agent] = set()
    return hidden


def spawned_by(agent: Agent) -> tuple[Agent, str] | None:
    """The parent agent and the id of its tool call that runs ``agent`` now (None: a
    top-level agent, or a parent gone)."""
    found = _CALLS.get(agent)
    parent = None if found is None else found[0]()
    return None if parent is None or found is None else (parent, found[1])


def agent_path(agent: Agent) -> str:
    """The agent's path in its tree (``""`` for a top-level agent)."""
    return _PATHS.get(agent, "")


def check_child(child: Agent, label: str) -> None:
    """Refuse a child that brings its own store: its sessions go into the parent's."""
    if child.store is not None and child not in _OWN:
        raise ConfigurationError(
            f"sub-agent {label!r} was built with a store; a sub-agent keeps its sessions in "
            "its parent's store: build it with store=None (the default without session_id)"
        )


def bind(child: Agent, parent: Agent, path: str, call_id: str = "") -> None:
    """Put ``child`` under ``parent``'s policy and store for one call at ``path`` (made by
    the parent's tool call ``call_id``)."""
    check_child(child, path)
    _HIDDEN[child] = tree_hidden(parent)
    _CALLS[child] = (weakref.ref(parent), call_id)
    own = _OWN.get(child)
    if own is None:
        own = _OWN[child] = _Own(
            child.budget, child.limits, child.confirm, tuple(child.interventions)
        )
        own.registered = {id(h) for h in child.interventions}
    _PATHS[child] = f"{agent_path(parent)}/{path}" if agent_path(parent) else path
    child.store = parent.store
    defaulted = own.limits is None or own.limits is DEFAULT_LIMITS  # the child set none
    child.limits = parent.limits if defaulted and parent.limits is not None else own.limits
    child.confirm = own.confirm if own.confirm is not None else parent.confirm
    child.budget = own.budget
    if parent.budget is not None:
        child.budget = SharedBudget(parent.budget, own.budget)
    _inherit_interventions(child, parent, own)
    _inherit_agent_hooks(child, parent)
    _inherit_audit(child, parent)


def _inherit_interventions(child: Agent, parent: Agent, own: _Own) -> None:
    missing = [h for h in parent.interventions if id(h) not in own.registered]
    if not missing:
        return
    from tether.control.interventions import InterventionRunner

    child.hooks.add_provider(InterventionRunner(missing))
    own.registered.update(id(h) for h in missing)
    child.interventions = (*child.interventions, *missing)


def _inherit_audit(child: Agent, parent: Agent) -> None:
    """The child writes its own audit records (tool calls, verdicts, interrupts) into the
    parent's store, redacted like the parent's; approvals are filed by the parent."""
    trail = parent.audit_sink
    if trail is None or child.audit_sink is not None:
        return
    from tether.control.audit import ApprovalPolicy, AuditTrail

    policy = ApprovalPolicy(redactor=trail.redactor)
    child.audit_sink = AuditTrail(child, policy, files_approvals=False)
    child.hooks.add_provider(child.audit_sink)


def _inherit_agent_hooks(child: Agent, parent: Agent) -> None:
    host = parent.agent_hooks
    if host is None:
        return
    if child.agent_hooks is not None and child.agent_hooks.parent is host:
        return  # bound on an earlier call
    if child.agent_hooks is not None:
        raise ConfigurationError(
            "a sub-agent has its own AGENT-HOOKS host, but its parent's host must govern it "
            "too and an agent takes one host: put the child's interceptors into the "
            "parent's declaration, or build the child without agent_hooks="
        )
    own = host.child()  # the parent's interceptors, the child's own AGENT-HOOKS sessions
    child.hooks.add_provider(own)
    child.agent_hooks = own
    if child.execution.buffer_output is None:
        child.buffer_output = True
