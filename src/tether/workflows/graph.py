"""Graph: nodes and (conditional) edges, run in supersteps; fan-in waits; bounded cycles.

Each superstep runs, at once, every node an edge fired to (the entry first, on the
prompt). A node's input is the output of the node whose edge fired to it, or a JSON list
of the outputs when several did (in the order the edges were added). A node that a node
still to run can reach (and that cannot reach it back) waits a superstep, so a fan-in
runs once, after all its fired branches. The run ends when no edge fires; its answer is
the output of the last superstep (a JSON list when it ran several nodes). A cycle is
bounded by ``max_steps`` supersteps: past it the run stops with ``limit_turns``.
Edge conditions must be pure functions of the output (a resumed graph replays them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tether.errors import ConfigurationError
from tether.run_state import StopRun
from tether.workflows.conductor import Call, NodeOutput, Progress
from tether.workflows.steps import valid_node_name
from tether.workflows.workflow import Workflow

Condition = Callable[[str], bool]


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    when: Condition | None


class Graph(Workflow):
    """``g = Graph(); g.add_node("a", step); g.add_edge("a", "b", when=...); g.set_entry("a")``."""

    kind = "graph"
    grows = True

    def __init__(self, *, max_steps: int = 25, name: str | None = None, **options: Any) -> None:
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ConfigurationError(f"Graph(max_steps=...) takes an int >= 1, got {max_steps!r}")
        self.max_steps = max_steps
        self._named: list[tuple[str, Any]] = []
        self._edges: list[Edge] = []
        self._entry: str | None = None
        super().__init__([], name=name, **options)

    def add_node(self, name: str, step: Any) -> Graph:
        """Add node ``name`` running ``step`` (an Agent, a workflow or a function)."""
        valid_node_name(name, "Graph node")
        if name in dict(self._named):
            raise ConfigurationError(f"graph {self.name!r} already has a node {name!r}")
        self._set_steps([*self._named, (name, step)])
        self._named.append((name, step))
        return self

    def add_edge(self, source: str, target: str, *, when: Condition | None = None) -> Graph:
        """After ``source`` runs, run ``target`` on its output (when ``when(output)``)."""
        names = dict(self._named)
        for end in (source, target):
            if end not in names:
                raise ConfigurationError(
                    f"graph {self.name!r} has no node {end!r}; nodes: {', '.join(names) or 'none'}"
                )
        if when is not None and not callable(when):
            raise ConfigurationError(
                f"add_edge(when=...) takes a function of the source's output, got "
                f"{type(when).__name__}"
            )
        self._edges.append(Edge(source, target, when))
        return self

    def set_entry(self, name: str) -> Graph:
        """The node that runs first, on the prompt."""
        if name not in dict(self._named):
            raise ConfigurationError(f"graph {self.name!r} has no node {name!r} to enter at")
        self._entry = name
        return self

    def check(self) -> None:
        if self._entry is None:
            raise ConfigurationError(f"graph {self.name!r} has no entry: call set_entry(name)")

    def plan(self, progress: Progress) -> list[Call] | str:
        assert self._entry is not None
        if not progress.steps:
            return [Call(self._entry, progress.task)]
        waiting: dict[str, list[tuple[str, str]]] = {}  # target -> fired (source, output)
        ran: list[NodeOutput] = []
        for outputs in progress.steps:
            for target in {o.name for o in outputs}:
                waiting.pop(target, None)  # consumed by this run
            for out in outputs:
                for edge in self._edges:
                    if edge.source == out.name and (edge.when is None or edge.when(out.output)):
                        waiting.setdefault(edge.target, []).append((out.name, out.output))
            ran = outputs
        ready = self._ready(waiting)
        if not ready:
            outs = [o.output for o in ran]
            return outs[0] if len(outs) == 1 else json.dumps(outs, ensure_ascii=False)
        if len(progress.steps) >= self.max_steps:
            raise StopRun(
                "limit_turns",
                f"graph {self.name!r} reached max_steps={self.max_steps} with "
                f"{', '.join(ready)} still to run",
            )
        return [Call(name, self._input(waiting[name])) for name in ready]

    def _ready(self, waiting: dict[str, list[tuple[str, str]]]) -> list[str]:
        """The nodes to run next, in add order: fired, and not waiting for another
        fired node that reaches them (fan-in)."""
        fired = [name for name, _ in self._named if name in waiting]
        return [
            name
            for name in fired
            if not any(
                other != name and self._reaches(other, name) and not self._reaches(name, other)
                for other in fired
            )
        ]

    def _reaches(self, source: str, target: str) -> bool:
        seen, todo = {source}, [source]
        while todo:
            node = todo.pop()
            for edge in self._edges:
                if edge.source == node and edge.target not in seen:
                    if edge.target == target:
                        return True
                    seen.add(edge.target)
                    todo.append(edge.target)
        return False

    def _input(self, fired: list[tuple[str, str]]) -> str:
        if len(fired) == 1:
            return fired[0][1]
        return json.dumps([output for _, output in fired], ensure_ascii=False)
