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

from tether.errors import ConfigurationError, RunError
from tether.workflows.conductor import Call, Conductor, Progress, progress_of
from tether.workflows.state import StateSpec
from tether.workflows.steps import Node, NodeKind, nodes

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.agent_ref import AgentRef
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
        "agent_hooks",
        "approvals",
        "execution",
    }
)


class Workflow:
    """Steps run in an order its subclass decides (:meth:`plan`), like one Agent.

    ``state`` (a dict or a pydantic model) is the shared state's initial value and
    ``reducers`` how parallel branches' updates of a key merge (``state.py``).
    ``options`` are Agent's constructor arguments for the workflow's own session
    (``session_id``, ``store``, ``limits``, ``interventions``, ``confirm``, ``budget``,
    ``agent_hooks``, ``approvals``, ``hooks`` ...): its policy applies to every node (a
    node's own adds to it). ``limits`` default to none of the workflow's own (each node
    keeps its own; combinators are bounded by construction).
    """

    kind = "workflow"

    def __init__(
        self,
        steps: Sequence[Any],
        *,
        name: str | None = None,
        state: Any = None,
        reducers: dict[str, Any] | None = None,
        **options: Any,
    ) -> None:
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise ConfigurationError(
                f"{type(self).__name__}() takes steps, state=, reducers= and Agent's session "
                f"and policy arguments ({', '.join(sorted(_OPTIONS))}), got {', '.join(unknown)}"
            )
        self.name = name or self.kind
        self.state_spec = StateSpec(state, reducers)
        self._options = options
        self._agent: Agent | None = None
        self._set_steps(list(steps))

    grows = False
    """Whether steps are added after construction (a Graph's ``add_node``)."""

    def _set_steps(self, steps: list[Any]) -> None:
        if self._agent is not None:
            raise ConfigurationError(
                f"{type(self).__name__} {self.name!r} has run: its steps are fixed (build a new one)"
            )
        kind = type(self).__name__
        self._nodes: list[Node] = nodes(steps, kind, self, self.state_spec, empty=self.grows)
        self._steps = steps
        self.node_kinds: dict[str, NodeKind] = {node.name: node.kind for node in self._nodes}

    # -- what subclasses decide ----------------------------------------------------------

    def plan(self, progress: Progress) -> list[Call] | str:
        """The next node calls, or the final text (a pure function of the progress)."""
        raise NotImplementedError

    def check(self) -> None:
        """Refuse an incomplete workflow before it runs (a Graph without an entry)."""

    @property
    def node_names(self) -> list[str]:
        """The nodes' names, in the order given."""
        return [node.name for node in self._nodes]

    # -- the agent it runs as -------------------------------------------------------------

    @property
    def agent(self) -> Agent:
        """The Agent this workflow runs as (built on first use, with its options)."""
        if self._agent is None:
            self._agent = self._build(dict(self._options), nested=False, spec=self.state_spec)
        return self._agent

    def check_nested(self, label: str) -> None:
        """Refuse to nest a workflow built with a store or a session id: its sessions go
        into the outer workflow's store (as a sub-agent's), so they would be dropped."""
        given = sorted(k for k in ("store", "session_id") if self._options.get(k) is not None)
        if given:
            raise ConfigurationError(
                f"workflow step {label!r} was built with {' and '.join(f'{k}=' for k in given)}; "
                "a nested workflow keeps its sessions in its outer workflow's store: build it "
                "without them"
            )

    def child_agent(self, outer: StateSpec | None = None) -> Agent:
        """A fresh Agent for this workflow as a step of another (no store of its own),
        sharing the state of the outer workflow (``outer``: its state's spec)."""
        options = {k: v for k, v in self._options.items() if k not in ("session_id", "store")}
        spec = self.state_spec if outer is None else self.state_spec.under(outer)
        return self._build({**options, "store": None}, nested=True, spec=spec)

    def state_at(self, agent: AgentRef) -> dict[str, Any]:
        """The shared state in ``agent``'s session (this workflow's) as its messages say."""
        model = self._conductor_of(agent)
        return progress_of(agent.messages, self, model.nested, model.spec, strict=False).state

    def view_at(self, agent: AgentRef) -> Any:
        """What a function step reads there: the state, as its (outer) pydantic model if typed."""
        return self._conductor_of(agent).spec.view(self.state_at(agent))

    def _conductor_of(self, agent: AgentRef) -> Conductor:
        model = agent.runtime.model
        if not isinstance(model, Conductor):
            raise ConfigurationError(
                f"a step of workflow {self.name!r} ran outside it (in agent "
                f"{agent.path or agent.name!r}): a workflow's node tools run only in its session"
            )
        return model

    def _build(self, options: dict[str, Any], *, nested: bool, spec: StateSpec) -> Agent:
        from dataclasses import replace
        from functools import partial

        from tether.agent import Agent
        from tether.context import KeepAll
        from tether.control import AfterModelCall, BeforeInvocation, BeforeModelCall, HookOrder
        from tether.execution import Execution
        from tether.workflows.observing import mark

        options.setdefault("limits", None)
        # The session's conversation is the workflow's progress: never compressed (the
        # conductor reads every step; the nodes' own sessions manage their context).
        options["execution"] = replace(options.get("execution") or Execution(), context=KeepAll())
        self.check()
        kind = type(self).__name__
        tools: list[Tool] = [node.tool for node in nodes(self._steps, kind, self, spec)]
        conductor = Conductor(self, nested, spec)
        agent = Agent(conductor, tools=tools, name=self.name, state=None, **options)
        # The conductor's decisions are not model calls: they give back the budget unit the
        # loop took for them and are not counted, so an IterationBudget, Limits(turns=...)
        # and usage.model_calls count the nodes' model calls only.
        # (registered with agent.on, so agent.clone keeps them: Temporal clones the tree)
        agent.on(BeforeModelCall, HookOrder.SDK_FIRST)(_give_back_the_unit)
        agent.on(AfterModelCall, HookOrder.SDK_FIRST)(_uncount)
        # the journal says the session is this workflow's (the timeline reads it)
        agent.on(BeforeInvocation, HookOrder.SDK_FIRST)(partial(mark, self))

        def mirror(event: BeforeModelCall) -> None:
            """The session state shows the fold after each step (journaled as a delta)."""
            try:
                state = progress_of(event.agent.messages, self, nested, spec, strict=False).state
            except RunError:  # a conflict: the conductor, called next, fails the run with it
                return
            if event.agent.state != state:
                event.agent.state.clear()
                event.agent.state.update(state)

        agent.on(BeforeModelCall, HookOrder.SDK_FIRST)(mirror)
        return agent

    def traced_agents(self) -> list[AgentRef]:
        """The agents :func:`tether.observe.instrument` traces for ``instrument(wf)``: the
        workflow's agent and every agent its nodes run, nested workflows' included."""
        from tether.workflows.observing import traced_agents

        return traced_agents(self)

    # -- running like an Agent ------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    @property
    def state(self) -> dict[str, Any]:
        """The shared state as of the last step (function steps read it and return
        updates; the session state mirrors it)."""
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

    def close(self) -> None:
        """Close the tool sources (MCP connections) and thread pools of every node's agent,
        at any depth (:meth:`Agent.close` of :attr:`agent`)."""
        if self._agent is not None:
            self._agent.close()

    def __enter__(self) -> Workflow:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def as_tool(self, name: str, description: str | None = None) -> Tool:
        """This workflow as a tool of an agent (each call a child session in the calling
        agent's store). A workflow built with ``store=`` or ``session_id=`` is refused:
        the tool would drop them."""
        from tether.agents.subagent import SubAgentTool

        given = sorted(k for k in ("store", "session_id") if self._options.get(k) is not None)
        if given:
            built = " and ".join(f"{k}=" for k in given)
            raise ConfigurationError(
                f"wf.as_tool({name!r}): this workflow was built with {built}, which a tool "
                "cannot use: each call runs the workflow as a child session in the calling "
                "agent's session tree and store. Build the workflow without them (give the "
                "store to the agent that calls the tool), or run it on its own with "
                "wf.run(...)"
            )

        def fresh() -> Agent:  # a plain task in, a plain answer out (no state envelope)
            options = {k: v for k, v in self._options.items() if k not in ("session_id", "store")}
            return self._build({**options, "store": None}, nested=False, spec=self.state_spec)

        return SubAgentTool(fresh, name=name, description=description)

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
