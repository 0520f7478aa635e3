"""A workflow's session in a timeline: node rows instead of the conductor's model calls.

A session is a workflow's when its journal holds the workflow marker (an ``audit`` entry
``{"workflow": {"name", "kind", "nodes"}}``, written with each task's run start:
:mod:`tether.workflows.observing`). Its conductor's turns are decisions, not model calls:
each node run it starts is a ``node`` row (node name, kind agent / workflow / function,
status, duration, the step of the task: ``round`` in a Loop, ``superstep`` in a Graph,
its path in the tree), with the node's own session nested under it like a sub-agent's;
its final turn is an ``answer`` row. An interrupt pending deep in a node is listed on
that node's row with its address (``review#2/legal#1/confirm:ConfirmWrites``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from tether.agents.addresses import SEPARATOR, child_session_id, step

if TYPE_CHECKING:
    from tether.durable import Entry
    from tether.messages import ToolCall
    from tether.ops.timeline_rows import RowBuilder
    from tether.ops.timeline_step import Step

__all__ = ["MARKER", "marked", "node_row", "place_interrupts"]

MARKER: Final = "workflow"
"""The marker's key in an ``audit`` entry, as ``tether.workflows.observing.MARKER`` writes
it (a reader of journals needs no workflow engine; tests/ops/test_timeline_workflow.py
checks the two agree)."""
STEP_NAMES: Final = {"loop": "round", "graph": "superstep"}
"""What a step of the session is called, by workflow kind (else ``step``)."""
_OPEN = ("pending", "running")


def marked(b: RowBuilder, data: Any) -> None:
    """The session is a workflow's: remember what the marker says, name it on the run."""
    nodes = data.get("nodes") if isinstance(data, dict) else None
    name, kind = str(b.scrub(str(data.get("name")))), str(data.get("kind"))
    b.workflow = {
        "name": name,
        "kind": kind,
        "nodes": {str(k): str(v) for k, v in nodes.items()} if isinstance(nodes, dict) else {},
    }
    if b.run is not None:
        b.run.title += f": {kind} workflow"
        b.run.detail["workflow"] = {"name": name, "kind": kind}


def node_row(b: RowBuilder, call: ToolCall, position: int, e: Entry) -> Step:
    """The row of one node run the conductor started (its session nests under it)."""
    assert b.workflow is not None
    kind = b.workflow["nodes"].get(call.name, "agent")
    label = STEP_NAMES.get(b.workflow["kind"], "step")
    here = step(call.name, call.id)
    title = f"{call.name} ({kind}, {label} {b.wf_step})"
    row = b.add("node", title, e.at, e.at, seq=e.seq, call_id=call.id)
    row.spawn = child_session_id(b.session_id, call.name, position, call.id)
    row.status = "pending"
    row.detail = {
        "node": call.name,
        "node_kind": kind,
        "step": b.wf_step,
        "step_name": label,
        "path": f"{b.path}{SEPARATOR}{here}" if b.path else here,
        # scrubbed of what a mask hid in another node (a task quoting the previous answer)
        "arguments": b.arguments(call.name, dict(call.arguments)),
        "interrupts": [],
    }
    return row


def place_interrupts(b: RowBuilder) -> None:
    """List each interrupt on the row of the node it was raised in (the first step of its
    name), with its address from the top of the tree; a node still waiting says so."""
    if b.workflow is None:
        return
    nodes = {
        step(s.detail["node"], s.call_id or ""): s for s in b.tools.values() if s.kind == "node"
    }
    for raised in b.interrupts.values():
        name = str(raised.detail.get("name"))
        node = nodes.get(name.split(SEPARATOR, 1)[0])
        if node is None:
            continue
        node.detail["interrupts"].append(
            {
                "interrupt_id": raised.interrupt_id,
                "address": f"{b.path}{SEPARATOR}{name}" if b.path else name,
                "status": raised.status,
                "source": raised.detail.get("source"),
                "reason": raised.detail.get("reason"),
            }
        )
        if raised.status in ("waiting", "in_doubt") and node.status in _OPEN:
            node.status = "waiting"  # it ran until it asked
            node.end = max(node.end, raised.start)
