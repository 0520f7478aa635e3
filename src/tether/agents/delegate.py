"""The built-in ``delegate`` tool: the model hands a task to a child with some of its tools.

Opt-in (``tools=[..., delegate()]``). The child uses the parent's model and the
parent's tools named in the call (all of them when none are named), runs under the
parent's policy like any sub-agent, and is bounded by depth (the top agent is depth 0;
its children are depth 1), by how many delegations one invocation may start and by
its own cap of model calls (``max_turns``; the parent's other limits apply too).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tether.agents.subagent import SubAgentTool
from tether.errors import ConfigurationError, SubAgentError
from tether.limits import Limits
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.agent_ref import AgentRef
    from tether.runtime import Runtime

DEFAULT_MAX_DEPTH = 2
DEFAULT_MAX_CHILDREN = 4
DEFAULT_MAX_TURNS = 50  # a helper's model calls per task
_REMEMBERED = 256  # invocations whose delegations are counted (older ones are over)


class DelegateTool(SubAgentTool):
    """See the module docstring; build it with :func:`delegate`."""

    def __init__(
        self,
        *,
        name: str = "delegate",
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_children: int = DEFAULT_MAX_CHILDREN,
        max_turns: int = DEFAULT_MAX_TURNS,
        system_prompt: str | None = None,
    ) -> None:
        checked = (
            ("max_depth", max_depth),
            ("max_children", max_children),
            ("max_turns", max_turns),
        )
        for label, value in checked:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(
                    f"delegate({label}=...) must be an int >= 1, got {value!r}"
                )
        self._init_state(None)
        self.max_depth = max_depth
        self.max_children = max_children
        self.max_turns = max_turns
        self.system_prompt = system_prompt
        self._started: dict[int, set[str]] = {}  # call ids by invocation number

        async def delegate(task: str, context: ToolContext, tools: list[str] | None = None) -> str:
            """Hand a self-contained task to a helper agent and get its answer back.

            Args:
                task: The task, with everything the helper needs to know.
                tools: Names of your tools the helper may use (default: all of them).
            """
            return await self.run_child(context, task)

        Tool.__init__(self, delegate, name=name, idempotent=True)

    def make_child(self, context: ToolContext) -> Agent:
        from tether.agent import Agent

        parent = context.agent
        path = parent.path
        depth = len(path.split("/")) if path else 0
        if depth + 1 > self.max_depth:
            raise SubAgentError(
                f"delegation refused: a helper at depth {depth + 1} is past the limit of "
                f"{self.max_depth} (delegate(max_depth=...)); do the task yourself"
            )
        run = parent.conversation.run
        if run is not None:
            if run.invocation not in self._started and len(self._started) >= _REMEMBERED:
                self._started.pop(next(iter(self._started)))  # the oldest invocation
            started = self._started.setdefault(run.invocation, set())
            started.add(context.tool_call.id)
            if len(started) > self.max_children:
                raise SubAgentError(
                    f"delegation refused: this invocation already started {self.max_children} "
                    "helper(s), the limit (delegate(max_children=...))"
                )
        names = context.tool_call.arguments.get("tools")
        runtime = parent.runtime
        return Agent(
            model=runtime.model,
            tools=self._subset(runtime, names, depth + 1),
            system_prompt=self.system_prompt or runtime.system_prompt,
            store=None,
            execution=runtime.execution,
            # its own cap of model calls, under the parent's other limits
            limits=replace(runtime.limits or Limits(), turns=self.max_turns),
        )

    def lookup_agent(self, parent: AgentRef) -> AgentRef:
        """The parent itself: a helper's tools are some of its parent's."""
        return parent

    def _subset(self, runtime: Runtime, names: Any, depth: int) -> list[Tool]:
        available = {
            name: t
            for name, t in runtime.toolset.by_name.items()
            if not (isinstance(t, DelegateTool) and depth >= self.max_depth)
        }
        if names is None:
            return list(available.values())
        unknown = [n for n in names if n not in available]
        if unknown:
            raise SubAgentError(
                f"delegation refused: unknown or unavailable tool(s) {unknown}; "
                f"the helper may use: {', '.join(sorted(available)) or 'none'}"
            )
        return [available[n] for n in dict.fromkeys(names)]


def delegate(
    *,
    name: str = "delegate",
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_children: int = DEFAULT_MAX_CHILDREN,
    max_turns: int = DEFAULT_MAX_TURNS,
    system_prompt: str | None = None,
) -> DelegateTool:
    """The opt-in ``delegate`` tool (see the module docstring)."""
    return DelegateTool(
        name=name,
        max_depth=max_depth,
        max_children=max_children,
        max_turns=max_turns,
        system_prompt=system_prompt,
    )
