"""Workflow: the base of the combinators; it runs like an Agent.

A workflow is built into an Agent whose model is the :class:`Conductor` and whose tools
are its nodes (``steps.py``): ``wf.run``, ``invoke_async``, ``stream``, ``resume``,
``session_id=`` and ``store=`` are that agent's, so a workflow's session is durable,
governed and resumable exactly as an agent's is, and each node's run is a tool call of
it (a child session for an Agent or a nested workflow).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError
from tether.workflows.conductor import Call, Conductor, Progress
from tether.workflows.steps import Node, nodes

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control import AfterModelCall, BeforeModelCall
    from tether.control.interrupts import Interrupt
    from tether.events import StreamEvent
    from tether.prompts import Prompt
    from tether.result import Result
    from tether.tools.base import Tool

_OPTIONS = frozenset(
    {
        "hooks",
        "interventions",
        "middleware",
        "limits",
        "budget",
        "confirm",
        "session_id",
        "store",
        "state",
        "agent_hooks",
        "approvals",
        "execution",
    }
)


class Workflow:
    """Steps run in an order its subclass decides (:meth:`plan`), like one Agent.

    ``options`` are Agent's constructor arguments for the workflow's own session
    (``session_id``, ``store``, ``limits``, ``interventions``, ``confirm``, ``budget``,
    ``agent_hooks``, ``approvals``, ``hooks``, ``state`` ...): its policy applies to
    every node (a node's own adds to it). ``limits`` default to none of the workflow's
    own (each node keeps its own; combinators are bounded by construction).
    """

    kind = "workflow"

    def __init__(self, steps: Sequence[Any], *, name: str | None = None, **options: Any) -> None:
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise ConfigurationError(
                f"{type(self).__name__}() takes steps and Agent's session and policy "
                f"arguments ({', '.join(sorted(_OPTIONS))}), got {', '.join(unknown)}"
            )
        self._steps = list(steps)
        self._nodes: list[Node] = nodes(self._steps, type(self).__name__)
        self.name = name or self.kind
        self._options = options
        self._agent: Agent | None = None

    # -- what subclasses decide ----------------------------------------------------------

    def plan(self, progress: Progress) -> list[Call] | str:
        """The next node calls, or the final text (a pure function of the progress)."""
        raise NotImplementedError

    @property
    def node_names(self) -> list[str]:
        """The nodes' names, in the order given."""
        return [node.name for node in self._nodes]

    # -- the agent it runs as -------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        """The Agent this workflow runs as (built on first use, with its options)."""
        if self._agent is None:
            self._agent = self._build(dict(self._options))
        return self._agent

    def child_agent(self) -> Agent:
        """A fresh Agent for this workflow as a step of another (no store of its own)."""
        options = {k: v for k, v in self._options.items() if k not in ("session_id", "store")}
        return self._build({**options, "store": None})

    def _build(self, options: dict[str, Any]) -> Agent:
        from tether.agent import Agent
        from tether.control import AfterModelCall, BeforeModelCall, HookOrder

        options.setdefault("limits", None)
        tools: list[Tool] = [node.tool for node in nodes(self._steps, type(self).__name__)]
        agent = Agent(Conductor(self.name, self.plan), tools=tools, name=self.name, **options)
        # The conductor's decisions are not model calls: they give back the budget unit the
        # loop took for them and are not counted, so an IterationBudget, Limits(turns=...)
        # and usage.model_calls count the nodes' model calls only.
        agent.hooks.add(BeforeModelCall, _give_back_the_unit, HookOrder.SDK_FIRST)
        agent.hooks.add(AfterModelCall, _uncount, HookOrder.SDK_FIRST)
        return agent

    # -- running like an Agent ------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    @property
    def state(self) -> dict[str, Any]:
        """The workflow's state (function steps read it and return updates to it)."""
        return self.agent.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        return self.agent.pending_interrupts

    def run(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        """Run the workflow on ``prompt`` (sync); its Result (``stop_reason``, ``text``,
        ``interrupts``, ``usage.by_agent`` per node path)."""
        return self.agent.run(prompt, output_type=output_type)

    async def invoke_async(self, prompt: Prompt, *, output_type: Any = None) -> Result:
        return await self.agent.invoke_async(prompt, output_type=output_type)

    def stream(
        self, prompt: Prompt, *, output_type: Any = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """The run's events; a node's own events come as ``SubAgentEvent(path, event)``."""
        return self.agent.stream(prompt, output_type=output_type)

    def resume(self, answers: dict[str, Any] | None = None, **kwargs: Any) -> Result:
        """Answer pending interrupts (any node, any depth) and continue."""
        return self.agent.resume(answers, **kwargs)

    async def resume_async(self, answers: dict[str, Any] | None = None, **kwargs: Any) -> Result:
        return await self.agent.resume_async(answers, **kwargs)

    def resume_stream(
        self, answers: dict[str, Any] | None = None, **kwargs: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        return self.agent.resume_stream(answers, **kwargs)

    def cancel(self) -> None:
        """Cancel the run: every running node is cancelled (thread-safe)."""
        self.agent.cancel()

    def as_tool(self, name: str, description: str | None = None) -> Tool:
        """This workflow as a tool of an agent (each call a child session)."""
        from tether.agents.subagent import SubAgentTool

        return SubAgentTool(self.child_agent, name=name, description=description)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.node_names)})"


def _give_back_the_unit(event: BeforeModelCall) -> None:
    run = event.agent.conversation.run
    budget = event.agent.runtime.budget
    if budget is not None and run is not None and not run.grace_used and event.attempt == 1:
        budget.refund()  # (in the grace turn the loop took none)


def _uncount(event: AfterModelCall) -> None:
    run = event.agent.conversation.run
    if run is not None:
        run.usage.model_calls -= 1
