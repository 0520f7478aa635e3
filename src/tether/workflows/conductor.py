"""The conductor: the "model" of a workflow's own session, deciding the next node runs.

A workflow runs as an agent-like session whose tool calls are node runs, so the loop's
exactly-once journaling, in-doubt rules, interrupt lifting and resume apply to nodes
unchanged. The conductor reads the conversation (the task, then one assistant turn of
node calls and one tool message of their outputs per step) and answers with the next
calls, or with the final text. It is a pure function of the conversation: a workflow
resumed in another process decides exactly what the first one would have.

A function node's result, and a nested workflow's answer, is an envelope
``{"output": text, "update": {state key: value}}``; a nested workflow's task is
``{"input": text, "state": {...}}`` (the state it starts from). An agent node's result
is its plain answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from tether.errors import RunError
from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta
from tether.messages import Message, ToolResult, Usage
from tether.models.base import ModelRequest
from tether.result import StopReason
from tether.run_state import StopRun

if TYPE_CHECKING:
    from tether.workflows.state import StateSpec
    from tether.workflows.workflow import Workflow


@dataclass(frozen=True, slots=True)
class Call:
    """One node run to start: the node's tool and its input."""

    node: str
    task: str


@dataclass(frozen=True, slots=True)
class NodeOutput:
    """What one node run gave: its output text and its state update."""

    name: str
    output: str
    update: dict[str, Any]
    handoff: dict[str, Any] | None = None
    """A swarm agent's handoff (``{"to", "task"}``) instead of an answer."""


@dataclass(slots=True)
class Progress:
    """What a workflow's session says so far: its task, each step's outputs, the state."""

    task: str
    state: dict[str, Any] = field(default_factory=dict)
    steps: list[list[NodeOutput]] = field(default_factory=list)
    update: dict[str, Any] = field(default_factory=dict)
    """This invocation's updates combined (a nested workflow returns them)."""

    @property
    def runs(self) -> int:
        """How many node runs have finished in this invocation."""
        return sum(len(outputs) for outputs in self.steps)

    @property
    def last(self) -> str:
        """The output of the last step (its first node's), or the task before any."""
        if not self.steps:
            return self.task
        return self.steps[-1][0].output


Plan = Callable[[Progress], "list[Call] | str"]
"""A combinator's rule: the next node calls, or the workflow's final text."""


def envelope(output: str, update: dict[str, Any]) -> str:
    """A function node's result (or a nested workflow's answer)."""
    return json.dumps({"output": output, "update": update}, ensure_ascii=False)


def progress_of(
    messages: list[Message],
    workflow: Workflow,
    nested: bool,
    spec: StateSpec,
    *,
    strict: bool = True,
) -> Progress:
    """The current invocation's task and step outputs, and the state after them
    (``nested``: the session is a node of another workflow; its task is an envelope).
    ``strict``: a failed or stopped node of this invocation raises (the conductor's view;
    the state's readers only fold what succeeded)."""
    from tether.loop import GRACE_MESSAGE

    start = max(
        (i for i, m in enumerate(messages) if m.role == "user" and m.text != GRACE_MESSAGE),
        default=-1,
    )
    task = messages[start].text if start >= 0 else ""
    state = dict(spec.initial)
    if nested and start >= 0:
        task, state = _task_envelope(task, state)
    kinds = workflow.node_kinds
    progress = Progress(task)
    for index, message in enumerate(messages):
        if message.role != "tool":
            continue
        current = index > start
        outputs: list[NodeOutput] = []
        failed: list[ToolResult] = []
        for result in message.tool_results:
            if result.is_error:
                failed.append(result)
            else:
                outputs.append(_output(result, kinds.get(result.name, "agent")))
        if current and strict:
            for out in failed:
                stop = _control_stop(out)
                if stop is not None:
                    raise StopRun(stop, f"workflow node {out.name}: {out.content}")
            if failed:
                out = failed[0]
                raise RunError(f"workflow node {out.name} failed ({out.status}): {out.content}")
        order = {name: i for i, name in enumerate(workflow.node_names)}
        outputs.sort(key=lambda o: order.get(o.name, len(order)))
        merged = spec.merge_branches([(o.name, o.update) for o in outputs if o.update])
        if merged:
            state = spec.apply(state, merged)
            spec.check(state, ", ".join(o.name for o in outputs if o.update))
        if current:
            progress.steps.append(outputs)
            progress.update = spec.apply(progress.update, merged)
    progress.state = state
    return progress


def _task_envelope(text: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    try:
        data = json.loads(text)
    except ValueError:
        return text, state
    if isinstance(data, dict) and isinstance(data.get("input"), str):
        given = data.get("state")
        return data["input"], {**state, **given} if isinstance(given, dict) else state
    return text, state


def _output(result: ToolResult, kind: str) -> NodeOutput:
    if kind == "agent":
        return NodeOutput(result.name, result.content, {})
    data = json.loads(result.content)  # written by tether: a function's or workflow's envelope
    update = dict(data.get("update") or {})
    handoff = data.get("handoff") if kind == "member" else None
    return NodeOutput(result.name, str(data["output"]), update, handoff)


def _control_stop(out: ToolResult) -> StopReason | None:
    """The control stop reason a node's journaled error result carries, if any."""
    from tether.workflows.steps import CONTROL_STOPS, STOP_MARK

    if out.status == "cancelled":
        return "cancelled"
    head = f"Error: NodeStopped: {STOP_MARK}"
    if not out.content.startswith(head):
        return None
    reason = out.content[len(head) :].split("]", 1)[0]
    return cast("StopReason", reason) if reason in CONTROL_STOPS else None


class Conductor:
    """The Model of a workflow's session (zero tokens: it never calls a provider)."""

    def __init__(self, workflow: Workflow, nested: bool, spec: StateSpec) -> None:
        self._name = f"workflow:{workflow.name}"
        self._workflow = workflow
        self._nested = nested
        self.spec = spec
        """The state's initial value, type and reducers in this session (a nested
        workflow's include its outer workflow's reducers)."""

    @property
    def nested(self) -> bool:
        """Whether this session is a node of another workflow (its task and answer are
        envelopes carrying the state)."""
        return self._nested

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        from tether.loop import GRACE_MESSAGE

        workflow = self._workflow
        messages = request.messages
        progress = progress_of(
            messages, workflow, self._nested, self.spec
        )  # a node's own stop comes first: it says why
        if messages and messages[-1].role == "user" and messages[-1].text == GRACE_MESSAGE:
            raise StopRun(
                "budget_exhausted",
                f"the iteration budget is used up; {self._name} stops before its next node",
            )
        decision = workflow.plan(progress)
        if isinstance(decision, str):
            text = envelope(decision, progress.update) if self._nested else decision
            if text:
                yield TextDelta(text)
            yield ModelStop("end_turn", Usage())
            return
        kinds = workflow.node_kinds
        for index, call in enumerate(decision):
            task = call.task
            if kinds.get(call.node) == "workflow":
                task = json.dumps({"input": task, "state": progress.state}, ensure_ascii=False)
            # The call id is the run's ordinal in the invocation (unique in its batch), so
            # a node's path is ``<node>#<n>``: ``draft#1``, ``review#2``, ``review#2/legal#1``.
            ordinal = str(progress.runs + index + 1)
            yield ToolCallDelta(index=index, id=ordinal, name=call.node, arguments={"task": task})
        yield ModelStop("tool_use", Usage())
