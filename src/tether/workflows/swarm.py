"""Swarm: agents that hand the conversation to each other with a ``handoff`` tool.

Each agent runs as a node of the swarm's session (a child session per turn of control)
and is offered ``handoff(agent, message)`` naming the others. A handoff ends that
agent's run (it is recorded in its session state, then its next model call is blocked
with the handoff as the reason: a resumed session blocks again with the same one), and the
swarm runs the named agent on the conversation so far (``history``: a function of the
messages, by default their user and assistant text) and the message. So after A hands
off to B, everything B asks (an approval, a clarification) is B's node: it resumes on B,
with B's tools and B's conversation, in any process. ``max_handoffs`` bounds the
handoffs: one more stops the run with ``limit_turns``. A handoff to an unknown agent is
a tool error for the model, listing the valid names.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError, SubAgentError, ToolArgumentError
from tether.messages import Message
from tether.run_state import StopRun
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.workflows.conductor import Call, Progress
from tether.workflows.steps import NodeTool, valid_node_name
from tether.workflows.workflow import Workflow

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control import BeforeModelCall

HANDOFF_KEY = "__tether_handoff__"
"""The session-state key where an agent's handoff waits for its run to end."""
HANDOFF_MARK = "[handoff] "

History = Callable[[list[Message]], str]


def text_history(messages: list[Message]) -> str:
    """The default history handed over: the user's and the agents' text, one per line."""
    lines = []
    for message in messages:
        if message.role in ("user", "assistant") and message.text.strip():
            lines.append(f"{message.role}: {message.text.strip()}")
    return "\n".join(lines)


class Swarm(Workflow):
    """``Swarm([triage, billing, tech], entry="triage", max_handoffs=5)``: agents, each
    named (``Agent(name=...)``), the entry runs first on the prompt."""

    kind = "swarm"

    def __init__(
        self,
        agents: Sequence[Agent],
        *,
        entry: str,
        max_handoffs: int = 10,
        history: History = text_history,
        name: str | None = None,
        **options: Any,
    ) -> None:
        from tether.agent import Agent

        members: dict[str, Agent] = {}
        for agent in agents:
            if not isinstance(agent, Agent):
                raise ConfigurationError(
                    f"Swarm takes Agents, got {type(agent).__name__} (wrap a workflow or a "
                    "function in an Agent's tool)"
                )
            member = valid_node_name(agent.name, "Swarm agent")
            if member in members:
                raise ConfigurationError(f"Swarm has two agents named {member!r}")
            members[member] = agent
        if entry not in members:
            raise ConfigurationError(
                f"Swarm(entry={entry!r}) names no agent; agents: {', '.join(members) or 'none'}"
            )
        if isinstance(max_handoffs, bool) or not isinstance(max_handoffs, int) or max_handoffs < 0:
            raise ConfigurationError(
                f"Swarm(max_handoffs=...) takes an int >= 0, got {max_handoffs!r}"
            )
        if not callable(history):
            raise ConfigurationError(
                f"Swarm(history=...) takes a function of the messages, got {type(history).__name__}"
            )
        self.entry = entry
        self.max_handoffs = max_handoffs
        self._history = history
        self._members = members
        super().__init__(
            [(n, _MemberStep(n, a, list(members), history)) for n, a in members.items()],
            name=name,
            **options,
        )

    def plan(self, progress: Progress) -> list[Call] | str:
        if not progress.steps:
            return [Call(self.entry, progress.task)]
        handoffs = [out for outputs in progress.steps for out in outputs if out.handoff]
        last = progress.steps[-1][0]
        if last.handoff is None:
            return last.output
        target = str(last.handoff["to"])
        if len(handoffs) > self.max_handoffs:
            raise StopRun(
                "limit_turns",
                f"swarm {self.name!r} reached max_handoffs={self.max_handoffs} "
                f"({last.name} -> {target} was not run)",
            )
        return [Call(target, str(last.handoff["task"]))]


class _MemberStep:
    """A swarm agent as a step: built into a :class:`MemberTool` (see ``steps.py``)."""

    def __init__(self, name: str, agent: Agent, names: list[str], history: History) -> None:
        self.name, self.agent, self.others, self.history = (
            name,
            agent,
            [n for n in names if n != name],
            history,
        )

    def tool(self) -> Tool:
        return MemberTool(self)


class MemberTool(NodeTool):
    """Runs a swarm agent with the ``handoff`` tool; its result is an envelope
    ``{"output": answer}`` or ``{"output": "", "handoff": {"to", "task"}}``."""

    def __init__(self, step: _MemberStep) -> None:
        self._step = step
        self._with_agent: Agent | None = None
        super().__init__(self._member, name=step.name, parallel=True)

    def _member(self) -> Agent:
        """The agent with the handoff tool (one per swarm node, built on first use)."""
        if self._with_agent is None:
            self._with_agent = self._with_handoff()
        return self._with_agent

    def _with_handoff(self) -> Agent:
        from tether.control import BeforeModelCall, HookOrder

        step = self._step
        handoff = _handoff_tool(step)
        member = step.agent.clone(tools=[*step.agent.runtime.toolset.items, handoff])

        def end_after_handoff(event: BeforeModelCall) -> None:
            given = event.agent.state.get(HANDOFF_KEY)
            if isinstance(given, dict):
                history = step.history(event.agent.messages)
                task = f"{history}\n\n{step.name} hands off: {given.get('message', '')}".strip()
                event.block = HANDOFF_MARK + json.dumps(
                    {"to": given.get("to"), "task": task}, ensure_ascii=False
                )

        member.hooks.add(BeforeModelCall, end_after_handoff, HookOrder.SDK_FIRST)
        return member

    async def run_child(self, context: ToolContext, task: str) -> str:
        try:
            answer = await super().run_child(context, task)
        except SubAgentError as error:
            reason = error.reason or ""
            if error.stop_reason != "blocked" or not reason.startswith(HANDOFF_MARK):
                raise
            handoff = json.loads(reason[len(HANDOFF_MARK) :])
            return json.dumps({"output": "", "handoff": handoff}, ensure_ascii=False)
        return json.dumps({"output": answer}, ensure_ascii=False)


def _handoff_tool(step: _MemberStep) -> Tool:
    others = step.others

    def handoff(agent: str, message: str, context: ToolContext) -> str:
        """Hand the conversation to another agent, which takes over from here.

        Args:
            agent: The agent to hand off to.
            message: What that agent needs to know (why it takes over).
        """
        if agent not in others:
            raise ToolArgumentError(
                f"no agent named {agent!r} to hand off to; agents: {', '.join(others) or 'none'}"
            )
        context.state[HANDOFF_KEY] = {"to": agent, "message": message}
        return f"handing off to {agent}"

    names = ", ".join(others) or "none"
    return Tool(
        handoff,
        name="handoff",
        description=f"Hand the conversation to another agent ({names}); it answers from there.",
        idempotent=True,  # it only records the handoff: re-run after a crash, it records it again
    )
