"""tether's stream events as AG-UI 1.0 events: one mapping, stateful only where AG-UI
pairs events (a text or reasoning message opened and closed, a step, a sub-agent).

Everything that leaves through here goes through the one redaction path: tool arguments
through :class:`~tether.governance.masks.Masker` (the agent's redactor, then the default
mask), every other string scrubbed of what a mask hid and of secret-looking tokens.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ag_ui.core import (
    BaseEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentFinishedEvent,
    SubagentFinishedSuccessOutcome,
    SubagentFinishedSuspendedOutcome,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from tether.events import (
    ModelCallFinished,
    ModelCallStarted,
    ReasoningDelta,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolFinished,
)
from tether.governance.masks import Masker, redact_secrets
from tether.tools.context import INTERRUPT_STATE_KEY

if TYPE_CHECKING:
    from tether.control.interrupts import Interrupt

SEPARATOR = "/"


class _Scope:
    """The open text / reasoning message and step of one agent (top or a sub-agent)."""

    __slots__ = ("reasoning", "step", "steps", "text")

    def __init__(self) -> None:
        self.text: str | None = None
        self.reasoning: str | None = None
        self.step: str | None = None
        self.steps = 0


class EventMapper:
    """Turns a run's tether events into AG-UI events (``map``), and closes what is open
    when the run ends (``close``). ``prefix`` makes message ids unique in the thread."""

    def __init__(self, prefix: str, masker: Masker) -> None:
        self._prefix = prefix
        self._masker = masker
        self._ids = 0
        self._scopes: dict[str, _Scope] = {}
        self._subagents: list[str] = []  # open sub-agent run ids, outermost first

    def map(self, event: StreamEvent, path: str = "") -> list[BaseEvent]:
        """The AG-UI events for ``event`` of the agent at ``path`` ("" : the top agent)."""
        if isinstance(event, SubAgentEvent):
            inner = f"{path}{SEPARATOR}{event.path}" if path else event.path
            return [*self._open_subagents(inner), *self.map(event.event, inner)]
        scope = self._scopes.setdefault(path, _Scope())
        sub = path or None
        if isinstance(event, TextDelta):
            if not event.text:
                return []
            out = self._close_reasoning(scope, sub)
            if scope.text is None:
                scope.text = self._new_id("msg")
                out.append(
                    TextMessageStartEvent(
                        message_id=scope.text, role="assistant", subagent_run_id=sub
                    )
                )
            delta = self._masker.scrub(event.text)
            out.append(
                TextMessageContentEvent(message_id=scope.text, delta=delta, subagent_run_id=sub)
            )
            return out
        if isinstance(event, ReasoningDelta):
            if not event.text or event.redacted:
                return []
            out = self._close_text(scope, sub)
            if scope.reasoning is None:
                scope.reasoning = self._new_id("reasoning")
                out.append(ReasoningStartEvent(message_id=scope.reasoning, subagent_run_id=sub))
                out.append(
                    ReasoningMessageStartEvent(message_id=scope.reasoning, subagent_run_id=sub)
                )
            delta = self._masker.scrub(event.text)
            out.append(
                ReasoningMessageContentEvent(
                    message_id=scope.reasoning, delta=delta, subagent_run_id=sub
                )
            )
            return out
        if isinstance(event, ModelCallStarted):
            out = self._close_step(scope, sub)
            scope.steps += 1
            scope.step = f"model call {scope.steps}"
            if event.attempt > 1:
                scope.step += f" (attempt {event.attempt})"
            out.append(StepStartedEvent(step_name=scope.step, subagent_run_id=sub))
            return out
        if isinstance(event, ModelCallFinished):
            parent = scope.text
            out = self._close_text(scope, sub) + self._close_reasoning(scope, sub)
            for call in event.response.tool_calls:
                args = json.dumps(self._masker.arguments(call.name, dict(call.arguments)))
                out.append(
                    ToolCallStartEvent(
                        tool_call_id=call.id,
                        tool_call_name=call.name,
                        parent_message_id=parent,
                        subagent_run_id=sub,
                    )
                )
                out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=args, subagent_run_id=sub))
                out.append(ToolCallEndEvent(tool_call_id=call.id, subagent_run_id=sub))
            return out + self._close_step(scope, sub)
        if isinstance(event, ToolFinished):
            out = self._close_subagent(f"{path}{SEPARATOR}" if path else "", event.tool_call.id)
            content = self._masker.scrub(event.result.content) or ""
            out.append(
                ToolCallResultEvent(
                    message_id=self._new_id("result"),
                    tool_call_id=event.tool_call.id,
                    content=content,
                    role="tool",
                    subagent_run_id=sub,
                )
            )
            return out
        return []  # the loop's other marks have no AG-UI counterpart

    def state(self, state: dict[str, Any]) -> StateSnapshotEvent:
        """The session's state as a STATE_SNAPSHOT: secret-looking keys masked, hidden
        strings scrubbed, tether's own bookkeeping left out."""
        shown = {k: v for k, v in state.items() if k != INTERRUPT_STATE_KEY}
        return StateSnapshotEvent(snapshot=self._masker.scrub(redact_secrets(None, shown)))

    def close(self, interrupts: list[Interrupt]) -> list[BaseEvent]:
        """Close every open message and step; a sub-agent still open is suspended (it
        waits on ``interrupts``, the run-level ones it raised named)."""
        out: list[BaseEvent] = []
        for path, scope in self._scopes.items():
            sub = path or None
            out += self._close_text(scope, sub) + self._close_reasoning(scope, sub)
            out += self._close_step(scope, sub)
        for run_id in reversed(self._subagents):
            own = [i.id for i in interrupts if subagent_of(i) == run_id]
            outcome = SubagentFinishedSuspendedOutcome(interrupt_ids=own or None)
            out.append(SubagentFinishedEvent(subagent_run_id=run_id, outcome=outcome))
        self._subagents.clear()
        return out

    # -- pairs ---------------------------------------------------------------------------

    def _new_id(self, kind: str) -> str:
        self._ids += 1
        return f"{self._prefix}:{kind}:{self._ids}"

    def _close_text(self, scope: _Scope, sub: str | None) -> list[BaseEvent]:
        if scope.text is None:
            return []
        message_id, scope.text = scope.text, None
        return [TextMessageEndEvent(message_id=message_id, subagent_run_id=sub)]

    def _close_reasoning(self, scope: _Scope, sub: str | None) -> list[BaseEvent]:
        if scope.reasoning is None:
            return []
        message_id, scope.reasoning = scope.reasoning, None
        return [
            ReasoningMessageEndEvent(message_id=message_id, subagent_run_id=sub),
            ReasoningEndEvent(message_id=message_id, subagent_run_id=sub),
        ]

    def _close_step(self, scope: _Scope, sub: str | None) -> list[BaseEvent]:
        if scope.step is None:
            return []
        name, scope.step = scope.step, None
        return [StepFinishedEvent(step_name=name, subagent_run_id=sub)]

    def _open_subagents(self, path: str) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        steps = path.split(SEPARATOR)
        for depth in range(1, len(steps) + 1):
            run_id = SEPARATOR.join(steps[:depth])
            if run_id in self._subagents:
                continue
            name, _, call_id = steps[depth - 1].rpartition("#")
            self._subagents.append(run_id)
            out.append(
                SubagentStartedEvent(
                    subagent_run_id=run_id,
                    name=name or steps[depth - 1],
                    parent_subagent_run_id=SEPARATOR.join(steps[: depth - 1]) or None,
                    parent_tool_call_id=call_id or None,
                )
            )
        return out

    def _close_subagent(self, parent: str, call_id: str) -> list[BaseEvent]:
        """SUBAGENT_FINISHED for the sub-agent the call ``call_id`` of ``parent`` ran (and
        any of its own still open), when that call finishes."""
        out: list[BaseEvent] = []
        for run_id in reversed(list(self._subagents)):
            head, _, last = run_id.rpartition(SEPARATOR)
            if (f"{head}{SEPARATOR}" if head else "") == parent and last.endswith(f"#{call_id}"):
                for inner in reversed(list(self._subagents)):
                    if inner.startswith(run_id + SEPARATOR) or inner == run_id:
                        self._subagents.remove(inner)
                        scope = self._scopes.pop(inner, None)
                        if scope is not None:
                            out += self._close_text(scope, inner) + self._close_reasoning(
                                scope, inner
                            )
                            out += self._close_step(scope, inner)
                        out.append(
                            SubagentFinishedEvent(
                                subagent_run_id=inner, outcome=SubagentFinishedSuccessOutcome()
                            )
                        )
        return out


def subagent_of(interrupt: Interrupt) -> str | None:
    """The sub-agent run id (its agent path) an interrupt was raised in; None: the top."""
    from tether.agents.addresses import address

    steps = address(interrupt)
    return SEPARATOR.join(steps) or None
