"""A child runs under its parent's policy: interventions, AGENT-HOOKS, limits, budget, store.

The child's author may add to the parent's policy, never drop it: every intervention
of the parent (its inherited ones included) runs in the child after the child's own;
the parent's AGENT-HOOKS host is attached when the child has none (a child with a
different host is refused); the parent's limits, confirm callback and approval filing
apply unless the child sets its own limits / confirm; model calls draw on the
parent's iteration budget. The child's sessions live in the parent's store. The tree's
agents share one set of strings the redaction hides (``Runtime.hidden``).

All of it is one pure function of two runtimes (:func:`inherited`, what
``Runtime.under`` returns): the child Agent object and its own runtime never change, so
a child used on its own after a parent called it has exactly its own configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.errors import ConfigurationError
from tether.limits import DEFAULT_LIMITS, SharedBudget

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.runtime import Runtime


def check_child(child: Runtime, label: str) -> None:
    """Refuse a child that brings its own store: its sessions go into the parent's."""
    if child.store is not None:
        raise ConfigurationError(
            f"sub-agent {label!r} was built with a store; a sub-agent keeps its sessions in "
            "its parent's store: build it with store=None (the default without session_id)"
        )


def inherited(
    own: Runtime, parent: Runtime, path: str, call_id: str = "", by: AgentRef | None = None
) -> Runtime:
    """``own`` (a child agent's runtime) under ``parent``'s policy and store, at ``path``
    in the tree, run by the parent's tool call ``call_id`` (made by agent ``by``)."""
    return placed(policy_of(own, parent, path), parent, path, call_id, by)


def placed(
    base: Runtime, parent: Runtime, path: str, call_id: str = "", by: AgentRef | None = None
) -> Runtime:
    """``base`` (a :func:`policy_of` result) at ``path`` under ``parent``, run by its
    tool call ``call_id``: the per-call part of :func:`inherited` (one copy)."""
    return base.replace(
        path=f"{parent.path}/{path}" if parent.path else path,
        spawned_by=None if by is None else (by, call_id),
    )


def policy_of(own: Runtime, parent: Runtime, label: str = "") -> Runtime:
    """``own`` under ``parent``'s policy and store, not yet placed in the tree. The same
    for every call of one child under one parent, so a sub-agent tool may keep it
    (agents/subagent.py does, for an Agent object, whose calls run one at a time)."""
    check_child(own, label)
    hooks = own.hooks.copy()
    missing = [h for h in parent.interventions if all(h is not o for o in own.interventions)]
    if missing:
        from tether.control.interventions import InterventionRunner

        hooks.add_provider(InterventionRunner(missing))
    host = own.agent_hooks
    buffer_output = own.buffer_output
    if parent.agent_hooks is not None:
        if host is not None:
            raise ConfigurationError(
                "a sub-agent has its own AGENT-HOOKS host, but its parent's host must govern "
                "it too and an agent takes one host: put the child's interceptors into the "
                "parent's declaration, or build the child without agent_hooks="
            )
        host = parent.agent_hooks.child()  # the parent's interceptors, the child's sessions
        hooks.add_provider(host)
        if own.execution.buffer_output is None:
            buffer_output = True
    audit = own.audit
    if parent.audit is not None and audit is None and parent.store is not None:
        # The child writes its own audit records (tool calls, verdicts, interrupts) into
        # the parent's store, redacted like the parent's and its own; approvals are filed
        # by the parent with both policies (AuditTrail.under).
        audit = parent.audit.under(own.approvals, own.toolset, label)
        hooks.add_provider(audit)
    defaulted = own.limits is None or own.limits is DEFAULT_LIMITS  # the child set none
    budget = own.budget
    if parent.budget is not None:
        budget = SharedBudget(parent.budget, own.budget)
    return own.replace(
        hooks=hooks,
        interventions=(*own.interventions, *missing),
        limits=parent.limits if defaulted and parent.limits is not None else own.limits,
        budget=budget,
        confirm=own.confirm if own.confirm is not None else parent.confirm,
        store=parent.store,
        audit=audit,
        agent_hooks=host,
        buffer_output=buffer_output,
        observers=list(own.observers),
        hidden=parent.hidden,
    )


def agent_path(agent: AgentRef) -> str:
    """The agent's path in its tree (``""`` for a top-level agent): ``agent.path``."""
    return agent.path
