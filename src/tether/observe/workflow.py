"""How tracing recognises a workflow (``tether.workflows``) without importing it: its
session's model is a :class:`Conducting` (the conductor, deciding node runs: not an LLM
call, so no ``chat`` span), and ``instrument(wf)`` takes a :class:`Traceable`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.messages import ToolCall


@runtime_checkable
class Conducting(Protocol):
    """A workflow session's model: ``tether.workflow.*`` attributes of its run
    (``call`` None) and of each node run (one of its tool calls)."""

    def span_attributes(self, agent: AgentRef, call: ToolCall | None) -> dict[str, Any]: ...


@runtime_checkable
class Traceable(Protocol):
    """Something that runs several agents as one (a workflow): the agents to trace."""

    def traced_agents(self) -> list[AgentRef]: ...


def conducting(model: object) -> Conducting | None:
    """``model`` when it is a workflow's conductor, else None."""
    return model if isinstance(model, Conducting) else None
