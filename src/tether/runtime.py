"""Runtime: everything an invocation runs with, as one frozen value.

``Agent(...)`` validates its arguments and builds its runtime once (``agent.runtime``);
the engine reads configuration only from it (``run.runtime``), never from the Agent.
A sub-agent call runs the child's runtime *under* its parent's (:meth:`Runtime.under`):
inheritance is a new value, the child Agent is never changed.

Two fields are registration points that grow but are never reassigned: ``hooks`` (the
hook registry ``agent.on`` adds to) and ``observers`` (tracing adds one). The toolset
refreshes its own views when an MCP server's tools change (tools/toolset.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.agent_hooks import AgentHooksHost
    from tether.control.audit import ApprovalPolicy, AuditTrail
    from tether.control.interventions import ConfirmCallback, InterventionHandler
    from tether.control.middleware import ModelMiddleware, ToolMiddleware
    from tether.control.registry import HookRegistry
    from tether.durable import Store
    from tether.events import StreamObserver
    from tether.execution import Execution
    from tether.limits import IterationBudget, Limits
    from tether.models.base import Model
    from tether.tools.threads import ToolPool
    from tether.tools.toolset import Toolset


@dataclass(frozen=True, slots=True, eq=False)
class Runtime:
    """What an invocation runs with (built and validated by ``Agent``; read-only)."""

    model: Model
    toolset: Toolset
    system_prompt: str | None
    hooks: HookRegistry
    model_middleware: tuple[ModelMiddleware, ...]
    tool_middleware: tuple[ToolMiddleware, ...]
    interventions: tuple[InterventionHandler, ...]
    """The policy handlers this runtime runs (under a parent: the parent's too)."""
    limits: Limits | None
    budget: IterationBudget | None
    confirm: ConfirmCallback | None
    store: Store | None
    audit: AuditTrail | None
    """The audit trail writing approvals and audit records (with a store), or None."""
    agent_hooks: AgentHooksHost | None
    approvals: ApprovalPolicy | None
    execution: Execution
    buffer_output: bool
    """Hold model text until the post_model_call and output verdicts (AGENT-HOOKS)."""
    threads: ToolPool
    """The bounded thread pool that runs sync tools (its threads start on first use)."""
    observers: list[StreamObserver] = field(default_factory=list)
    """Called with every stream event of a run before it is yielded (tether.observe)."""
    name: str | None = None
    path: str = ""
    """The agent's path in its tree (``researcher#c1/coder#c4``; ``""`` at the top)."""
    hidden: set[str] = field(default_factory=set)
    """The strings the redaction hides in this runtime's agent tree (learned in any of its
    agents: their traces and trajectories hide them all). Shared down the tree."""
    spawned_by: tuple[Any, str] | None = None
    """Under a parent: the parent agent (an AgentRef) and the id of its tool call that
    runs this runtime; None at the top of a tree."""

    def replace(self, **changes: Any) -> Runtime:
        """A copy with ``changes`` (no validation: the Agent validates what users give)."""
        # field by field, not dataclasses.replace: its checks and keyword call cost a
        # sub-agent call (which places a copy per call) more than the copy itself
        twin = object.__new__(Runtime)
        put = object.__setattr__
        for name in _FIELDS:
            put(twin, name, changes[name] if name in changes else getattr(self, name))
        return twin

    def under(
        self, parent: Runtime, path: str, call_id: str = "", by: AgentRef | None = None
    ) -> Runtime:
        """This runtime run by ``parent``'s tool call ``call_id`` (of agent ``by``) at
        ``path``: under the parent's policy and in its store (the rules and why:
        tether/inheritance.py). Neither runtime changes."""
        from tether.inheritance import inherited

        return inherited(self, parent, path, call_id, by)


_FIELDS = tuple(f.name for f in dataclasses.fields(Runtime))
