"""What traces and timelines learn about a workflow: its journaled marker, its agents, and
the ``tether.workflow.*`` attributes of its runs and node runs.

**The marker.** Every invocation of a workflow's session that starts a task journals one
``audit`` entry ``{"workflow": {"name", "kind", "nodes": {node: "agent" | "workflow" |
"function"}}}`` (deferred: it commits with the run's start and its task), so a reader of
the journal alone (the timeline, in any process) knows the session is a workflow's, of
which kind, and what each node is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control import BeforeInvocation
    from tether.messages import ToolCall
    from tether.workflows.workflow import Workflow

MARKER: Final = "workflow"
"""The key of the workflow marker in an ``audit`` journal entry."""
STEP_NAMES: Final = {"loop": "round", "graph": "superstep"}
"""What a step of the session is called, by workflow kind (else ``step``)."""


def describe(workflow: Workflow) -> dict[str, Any]:
    """The marker's value: the workflow's name, kind and its nodes' kinds."""
    nodes = {
        name: ("agent" if kind == "member" else kind) for name, kind in workflow.node_kinds.items()
    }
    return {"name": workflow.name, "kind": workflow.kind, "nodes": nodes}


def mark(workflow: Workflow, event: BeforeInvocation) -> None:
    """Journal the marker with a run that starts a task (a resume has it already)."""
    run = event.agent.conversation.run
    if event.messages and run is not None and run.journal is not None:
        run.journal.defer("audit", {MARKER: describe(workflow)})


def step_of(agent: AgentRef) -> int:
    """The number of the session's current step (1: the task's first batch of node
    calls): its assistant turns with calls since the task's message."""
    from tether.loop import GRACE_MESSAGE

    messages = agent.messages
    start = max(
        (i for i, m in enumerate(messages) if m.role == "user" and m.text != GRACE_MESSAGE),
        default=-1,
    )
    return sum(1 for m in messages[start + 1 :] if m.role == "assistant" and m.tool_calls)


def span_attributes(workflow: Workflow, agent: AgentRef, call: ToolCall | None) -> dict[str, Any]:
    """``tether.workflow.*`` of the session's run (``call`` None) or of one node run."""
    attributes: dict[str, Any] = {
        "tether.workflow.name": workflow.name,
        "tether.workflow.kind": workflow.kind,
    }
    if call is None:
        return attributes
    kind = workflow.node_kinds.get(call.name, "agent")
    step = step_of(agent)
    here = f"{call.name}#{call.id}"
    attributes.update(
        {
            "tether.workflow.node": call.name,
            "tether.workflow.node_kind": "agent" if kind == "member" else kind,
            "tether.workflow.path": f"{agent.path}/{here}" if agent.path else here,
            "tether.workflow.step": step,
        }
    )
    named = STEP_NAMES.get(workflow.kind)
    if named is not None:
        attributes[f"tether.workflow.{named}"] = step
    return attributes


def traced_agents(workflow: Workflow) -> list[AgentRef]:
    """The workflow's agent and every agent its nodes run, at every depth (a nested
    workflow's agent and its nodes' agents too), each once."""
    from tether.workflows.conductor import Conductor
    from tether.workflows.steps import NodeTool

    top = workflow.agent
    found: list[AgentRef] = [top]
    seen = {id(top)}
    todo: list[AgentRef] = [top]
    while todo:
        agent = todo.pop()
        if not isinstance(agent.runtime.model, Conductor):
            continue  # a node agent: its own sub-agents are its author's to trace
        for tool in agent.runtime.toolset.tools:
            if isinstance(tool, NodeTool):
                child = tool.lookup_agent(agent)  # the object every run of the node uses
                if id(child) not in seen:
                    seen.add(id(child))
                    found.append(child)
                    todo.append(child)
    return found
