"""The conductor: the "model" of a workflow's own session, deciding the next node runs.

A workflow runs as an agent-like session whose tool calls are node runs, so the loop's
exactly-once journaling, in-doubt rules, interrupt lifting and resume apply to nodes
unchanged. The conductor reads the conversation (the task, then one assistant turn of
node calls and one tool message of their outputs per step) and answers with the next
calls, or with the final text. It is a pure function of the conversation: a workflow
resumed in another process decides exactly what the first one would have.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import cast

from tether.errors import RunError
from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta
from tether.messages import Message, ToolResult, Usage
from tether.models.base import ModelRequest
from tether.result import StopReason
from tether.run_state import StopRun


@dataclass(frozen=True, slots=True)
class Call:
    """One node run to start: the node's tool and its input."""

    node: str
    task: str


@dataclass(slots=True)
class Progress:
    """What a workflow's session says so far: its task and each step's outputs."""

    task: str
    steps: list[list[ToolResult]] = field(default_factory=list)

    @property
    def runs(self) -> int:
        """How many node runs have finished in this invocation."""
        return sum(len(outputs) for outputs in self.steps)

    @property
    def last(self) -> str:
        """The output of the last step (its first node's), or the task before any."""
        if not self.steps:
            return self.task
        return self.steps[-1][0].content


Plan = Callable[[Progress], "list[Call] | str"]
"""A combinator's rule: the next node calls, or the workflow's final text."""


def progress_of(messages: list[Message]) -> Progress:
    """The current invocation's task and step outputs: from the first user message after
    the last final answer (a later user message, such as a budget's wrap-up note, is not
    a task)."""
    start = 0
    for index, message in enumerate(messages):
        if message.role == "assistant" and not message.tool_calls:
            start = index + 1
    first = next((i for i in range(start, len(messages)) if messages[i].role == "user"), None)
    progress = Progress(messages[first].text if first is not None else "")
    for message in messages[start:]:
        if message.role != "tool":
            continue
        outputs = [b for b in message.content if isinstance(b, ToolResult)]
        failed = [out for out in outputs if out.is_error]
        for out in failed:
            stop = _control_stop(out)
            if stop is not None:
                raise StopRun(stop, f"workflow node {out.name}: {out.content}")
        if failed:
            out = failed[0]
            raise RunError(f"workflow node {out.name} failed ({out.status}): {out.content}")
        progress.steps.append(outputs)
    return progress


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

    def __init__(self, name: str, plan: Plan) -> None:
        self._name = f"workflow:{name}"
        self._plan = plan

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        from tether.loop import GRACE_MESSAGE

        messages = request.messages
        progress = progress_of(messages)  # a node's own stop comes first: it says why
        if messages and messages[-1].role == "user" and messages[-1].text == GRACE_MESSAGE:
            raise StopRun(
                "budget_exhausted",
                f"the iteration budget is used up; {self._name} stops before its next node",
            )
        decision = self._plan(progress)
        if isinstance(decision, str):
            if decision:
                yield TextDelta(decision)
            yield ModelStop("end_turn", Usage())
            return
        for index, call in enumerate(decision):
            # The call id is the run's ordinal in the invocation (unique in its batch), so
            # a node's path is ``<node>#<n>``: ``draft#1``, ``review#2``, ``review#2/legal#1``.
            ordinal = str(progress.runs + index + 1)
            yield ToolCallDelta(
                index=index, id=ordinal, name=call.node, arguments={"task": call.task}
            )
        yield ModelStop("tool_use", Usage())
