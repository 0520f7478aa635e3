"""Steps: what a workflow runs at a node (an Agent, another workflow, or a function).

Each step becomes one tool of the workflow's session: an Agent or a workflow is a
sub-agent tool (each run a child session ``<workflow session>/<node>#<position>.<n>``,
under the workflow's policy and store), a function is a tool that reads the workflow's
state and returns its output and state updates.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

from tether.agents.subagent import SubAgentTool
from tether.errors import ConfigurationError, InputError, SubAgentError
from tether.result import StopReason
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.workflows.state import StateSpec
    from tether.workflows.workflow import Workflow

StepFunction: TypeAlias = Callable[["StepContext"], Any]
StepLike: TypeAlias = "Agent | Workflow | StepFunction | tuple[str, Any]"
"""A step, optionally named: ``("review", agent)``."""

_BAD = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class StepContext:
    """What a function step sees: its input (the previous output) and the state."""

    input: str
    state: Any
    """The state before this step: a dict, or the workflow's pydantic model."""
    node: str


@dataclass(frozen=True, slots=True)
class Update:
    """A function step's result: its output (None: its input passes on) and state updates."""

    output: str | None = None
    state: Mapping[str, Any] = field(default_factory=dict)


NodeKind: TypeAlias = Literal["agent", "workflow", "function", "member"]


@dataclass(frozen=True, slots=True)
class Node:
    """One step of a combinator, under its (unique, tool-safe) name."""

    name: str
    kind: NodeKind
    tool: Tool


def nodes(
    steps: Iterable[Any], kind: str, workflow: Workflow, spec: StateSpec, *, empty: bool = False
) -> list[Node]:
    """The combinator's steps as named nodes (names made unique: ``a``, ``a_2``)."""
    out: list[Node] = []
    taken: set[str] = set()
    for index, given in enumerate(steps):
        name, step = given if isinstance(given, tuple) and len(given) == 2 else (None, given)
        base = _safe(name or _default_name(step) or f"step{index + 1}")
        unique, n = base, 1
        while unique in taken:
            n += 1
            unique = f"{base}_{n}"
        taken.add(unique)
        out.append(step_node(unique, step, kind, workflow, spec))
    if not out and not empty:
        raise ConfigurationError(f"{kind} needs at least one step")
    return out


def step_node(name: str, step: Any, kind: str, workflow: Workflow, spec: StateSpec) -> Node:
    """Node ``name`` running ``step`` (as a node of ``workflow``, whose state is ``spec``)."""
    from tether.agent import Agent
    from tether.workflows.swarm import _MemberStep
    from tether.workflows.workflow import Workflow

    if isinstance(step, _MemberStep):
        return Node(name, "member", step.tool())
    if isinstance(step, Agent):
        from tether.inheritance import check_child

        agent = step
        check_child(agent.runtime, name)  # its sessions live in the workflow's store
        # The Agent object serves every run (parallel ones too): each runs the agent's
        # runtime under the workflow's on a fresh child conversation, never the object's.
        return Node(name, "agent", NodeTool(lambda: agent, name=name, parallel=True))
    if isinstance(step, Workflow):
        inner = step
        built: list[Agent] = []

        def child() -> Agent:  # one Agent per node (like an agent step's), built on first use
            if not built:
                built.append(inner.child_agent(spec))
            return built[0]

        return Node(name, "workflow", NodeTool(child, name=name, parallel=True))
    if callable(step):
        return Node(name, "function", _function_tool(name, step, workflow))
    raise ConfigurationError(
        f"{kind} step {name!r}: a step is an Agent, a workflow or a function of the step "
        f"context, got {type(step).__name__}"
    )


CONTROL_STOPS = frozenset(get_args(StopReason)) - {
    "end_turn",
    "interrupt",
    "paused",
    "max_tokens",
    "error",
}
"""A node's stop reasons that stop the whole workflow with the same reason (control
outcomes are stop reasons, never errors): tether.result's list less the ones a node ends
or waits with."""

STOP_MARK = "[workflow stop: "


class NodeStopped(SubAgentError):
    """A node stopped for a control reason (a limit, the budget, a block): the workflow
    stops with that reason. Its message, journaled as the node's result, starts with
    ``[workflow stop: <reason>]`` so a resumed workflow reads the same decision."""


class NodeTool(SubAgentTool):
    """A sub-agent tool running an Agent or a workflow as a node (a child session)."""

    async def run_child(self, context: ToolContext, task: str) -> str:
        try:
            return await super().run_child(context, task)
        except NodeStopped:
            raise
        except SubAgentError as error:
            if error.stop_reason not in CONTROL_STOPS:
                raise
            stopped = NodeStopped(f"{STOP_MARK}{error.stop_reason}] {error}")
            stopped.stop_reason, stopped.reason = error.stop_reason, error.reason
            raise stopped from error


def _default_name(step: Any) -> str | None:
    from tether.agent import Agent
    from tether.workflows.workflow import Workflow

    if isinstance(step, Agent | Workflow):
        return step.name
    name = getattr(step, "__name__", None)
    return name if isinstance(name, str) and name != "<lambda>" else None


def valid_node_name(name: Any, what: str) -> str:
    """A node name given by the user, used as is: 1-64 letters, digits, ``_`` or ``-``."""
    if not isinstance(name, str) or not name or _safe(name) != name:
        raise ConfigurationError(
            f"{what} name {name!r} is not valid: use 1-64 letters, digits, '_' or '-'"
        )
    return name


def _safe(name: str) -> str:
    cleaned = _BAD.sub("_", name).strip("_")[:64]
    return cleaned or "step"


def _function_tool(name: str, fn: StepFunction, workflow: Workflow) -> Tool:
    async def run_step(task: str, context: ToolContext) -> str:
        """Args:
        task: The step's input.
        """
        step = StepContext(task, workflow.view_at(context.agent), name)  # state before it
        if inspect.iscoroutinefunction(fn):
            value = await fn(step)
        else:
            value = await asyncio.to_thread(fn, step)
            if inspect.isawaitable(value):
                value = await value
        return _result(value, task, name)

    # A function of the state is re-runnable: after a crash it runs again, never asks.
    return Tool(
        run_step, name=name, description=f"Workflow step {name}.", idempotent=True, read_only=True
    )


def _result(value: Any, task: str, node: str) -> str:
    """A step's return value as its node's result: the output and the state update."""
    from pydantic_core import to_jsonable_python

    from tether.workflows.conductor import envelope

    update: Mapping[str, Any] = {}
    if isinstance(value, Update):
        output, update = (task if value.output is None else value.output), value.state
    elif isinstance(value, Mapping):
        output, update = task, value
    elif value is None:
        output = task
    elif isinstance(value, str):
        output = value
    else:
        output = json.dumps(to_jsonable_python(value), ensure_ascii=False)
    try:
        data = to_jsonable_python(dict(update))
    except Exception as exc:  # pydantic's serialization error: the value is not JSON
        raise InputError(
            f"workflow node {node}: its state update is not JSON ({type(exc).__name__}: {exc})"
        ) from None
    return envelope(output, data)
