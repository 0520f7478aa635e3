"""A timeline's rows assembled into its JSON document: sub-agents' rows nested under the
tool calls that ran them, token usage per model call, the time split and the time axis."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from tether.messages import add_cost
from tether.ops.timeline_labels import notes
from tether.ops.timeline_step import Step

if TYPE_CHECKING:
    from tether.durable import SessionRecord


@dataclass
class Tree:
    """One session's rows, and its sub-agents' sessions by child session id."""

    session_id: str
    status: str
    steps: list[Step]
    broken: list[int]
    children: dict[str, Tree] = field(default_factory=dict)
    error: str | None = None
    unknown: dict[str, list[int]] = field(default_factory=dict)
    """Why this (child) session's rows could not be built."""
    workflow: dict[str, Any] | None = None
    """A workflow's session: its marker (name, kind, nodes' kinds)."""


Row = tuple[Step, int, "int | None", str]
"""A step, its depth, the index of the row it is nested under, its session id."""


def flatten(tree: Tree, depth: int, parent: int | None, out: list[Row]) -> None:
    """Rows in order, each sub-agent's rows right under the tool call that ran it."""
    for step in tree.steps:
        index = len(out)
        out.append((step, depth, parent, tree.session_id))
        child = tree.children.pop(step.spawn, None) if step.spawn is not None else None
        if child is None:
            continue
        step.detail["child_session"] = {
            "session_id": child.session_id,
            "status": child.status,
            "steps": len(child.steps),
            "unreadable_entries": child.broken,
            "notes": notes(child.broken, child.unknown),
            "error": child.error,
            "workflow": None if child.workflow is None else _named(child.workflow),
        }
        flatten(child, depth + 1, index, out)


def document(record: SessionRecord, tree: Tree) -> dict[str, Any]:
    """The JSON of ``tree`` (a session, its sub-agents inside): see :mod:`tether.ops.timeline`."""
    rows: list[Row] = []
    broken = tree.broken
    flatten(tree, 0, None, rows)
    steps = [r[0] for r in rows]
    top = [s for s, depth, _, _ in rows if depth == 0]
    start = min((s.start for s in steps), default=record.created_at)
    end = max((s.end for s in steps), default=record.updated_at)
    # a sub-agent's time is inside its tool call's: the split counts the top level only;
    # each moment counts once (waiting first, then tools, then the model): shares <= 100 %
    waits = sorted((s.start, s.end) for s in top if s.kind == "wait")
    tool_spans = [(s.start, s.end) for s in top if s.kind in ("tool", "node")]
    model_spans = [(s.start, s.end) for s in top if s.kind == "model"]
    waiting = _union(waits)
    tools = _union(waits + tool_spans) - waiting
    model = _union(waits + tool_spans + model_spans) - waiting - tools
    total = max(0.0, end - start)
    calls = []
    cumulative = 0
    spent: Decimal | None = None
    for index, (s, depth, _, session) in enumerate(rows):
        if s.kind == "model":
            tokens_in, tokens_out = s.detail["input_tokens"], s.detail["output_tokens"]
            cumulative += tokens_in + tokens_out
            cost = s.detail["cost"]
            spent = add_cost(spent, None if cost is None else Decimal(cost))
            calls.append(
                {
                    "step": index,
                    "input": tokens_in,
                    "output": tokens_out,
                    "cumulative": cumulative,
                    "cost": cost,
                    "depth": depth,
                    "session_id": session,
                }
            )
    return {
        "session_id": record.session_id,
        "status": record.status,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "start": start,
        "end": end,
        "steps": [s.json(i, depth, parent, sid) for i, (s, depth, parent, sid) in enumerate(rows)],
        "axis": _axis(steps, waits, start, total - waiting),
        "usage": {
            "calls": calls,
            "total_tokens": cumulative,
            "cost": None if spent is None else str(spent),
        },
        "time_split": {
            "model": model,
            "tools": tools,
            "waiting": waiting,
            "tether": max(0.0, total - model - tools - waiting),
            "total": total,
        },
        "unreadable_entries": broken,
        "notes": notes(broken, tree.unknown),
        "workflow": None if tree.workflow is None else _named(tree.workflow),
    }


def _named(workflow: dict[str, Any]) -> dict[str, Any]:
    return {"name": workflow["name"], "kind": workflow["kind"]}


def _axis(
    steps: list[Step], waits: list[tuple[float, float]], start: float, active: float
) -> dict[str, Any]:
    """Each step's place on a time axis where every wait for a human is compressed to a
    short fixed width (the real wait is in the step): ``[{x, w}]`` in compressed seconds."""
    squeeze = max(active * 0.04, 0.001)

    def at(t: float) -> float:
        shift = 0.0
        for w_start, w_end in waits:
            if t <= w_start:
                break
            real = w_end - w_start
            inside = min(t, w_end) - w_start
            shown = min(real, squeeze)
            shift += inside - (inside * shown / real if real > 0 else 0.0)
        return t - start - shift

    places = [{"x": at(s.start), "w": max(0.0, at(s.end) - at(s.start))} for s in steps]
    return {"places": places, "length": max((p["x"] + p["w"] for p in places), default=0.0)}


def _union(spans: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total
