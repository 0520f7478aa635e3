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

from tether.errors import RunError
from tether.events import ModelStop, ModelStreamEvent, TextDelta, ToolCallDelta
from tether.messages import Message, ToolResult, Usage
from tether.models.base import ModelRequest


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
    """The current invocation's task and step outputs (from its last user message on)."""
    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    task = messages[start].text if start >= 0 else ""
    progress = Progress(task)
    for message in messages[start + 1 :]:
        if message.role != "tool":
            continue
        outputs = [b for b in message.content if isinstance(b, ToolResult)]
        failed = [out for out in outputs if out.is_error]
        if failed:
            out = failed[0]
            raise RunError(f"workflow node {out.name} failed ({out.status}): {out.content}")
        progress.steps.append(outputs)
    return progress


class Conductor:
    """The Model of a workflow's session (zero tokens: it never calls a provider)."""

    def __init__(self, name: str, plan: Plan) -> None:
        self._name = f"workflow:{name}"
        self._plan = plan

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        progress = progress_of(request.messages)
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
