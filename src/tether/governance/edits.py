"""Edited arguments of a Confirm, anywhere in an agent tree: the one edit rule.

A Confirm lifted from a child (or a grandchild) names the child's tool call, which
the top agent does not have: :func:`agent_at` walks the interrupt's address through
the sub-agent tools to the agent that raised it. :func:`check_edit` is the rule every
answer path applies before an edit is recorded or run (docs/design.md s. 4, "Edits"):
the edited call fits the tool's schema (a person's values strictly, never coerced) and
the policies ahead of the Confirm would neither rewrite nor refuse it.

Governance sits below the facade and never imports ``tether.agent``: the rule names an
:class:`~tether.agent_ref.AgentRef` and reads its runtime's toolset and, through
:func:`tether.control.interventions.recheck_edit`, its interventions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tether.agents.addresses import SEPARATOR

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.interrupts import Interrupt
    from tether.tools.base import Tool


def agent_at(agent: AgentRef, point: str) -> AgentRef | None:
    """The agent at the address in ``point`` (an interrupt's point:
    ``researcher#p1/coder#k1/before_tool_call``), looked up from ``agent``, the top;
    None when a step of the path is not a sub-agent tool of the agent before it."""
    current = agent
    for where in point.split(SEPARATOR)[:-1]:
        holder = current.runtime.toolset.by_name.get(where.partition("#")[0])
        # a sub-agent tool (agents/subagent.py) names its child agent; asked structurally,
        # so the edit rule does not depend on the module that runs sub-agents
        lookup = getattr(holder, "lookup_agent", None)
        if not callable(lookup):
            return None
        current = lookup(current)
    return current


def tool_at(agent: AgentRef, point: str, tool_name: str) -> Tool | None:
    """The tool ``tool_name`` of the agent at the address in ``point``, or None."""
    owner = agent_at(agent, point)
    tool: Tool | None = None if owner is None else owner.runtime.toolset.by_name.get(tool_name)
    return tool


async def check_edit(
    agent: AgentRef, interrupt: Interrupt, arguments: dict[str, Any], *, inbox: bool = False
) -> None:
    """Refuse (AnswerError) an approval of ``interrupt`` that runs ``arguments`` when
    they do not fit the tool's schema or a policy ahead of the Confirm would rewrite or
    deny them. ``arguments`` are the whole call as it would run; ``inbox``: the check of
    an approval decision (its messages speak of the tool, not of the interrupt)."""
    from tether.control.events import BeforeToolCall
    from tether.control.interventions import recheck_edit
    from tether.errors import AnswerError, ToolArgumentError
    from tether.messages import ToolCall

    call = interrupt.tool_call
    owner = agent_at(agent, interrupt.point)
    tool = None if owner is None or call is None else owner.runtime.toolset.by_name.get(call.name)
    if inbox and (tool is None or call is None):
        name = None if call is None else call.name
        raise AnswerError(f"the agent has no tool {name!r} to validate the arguments")
    if owner is None or tool is None or call is None:
        raise AnswerError(
            f"interrupt {interrupt.id} ({interrupt.name}) is not about a known tool; "
            "'args' cannot apply: answer it without 'args'"
        )
    edited = {k: v for k, v in arguments.items() if not same(call.arguments.get(k), v)}
    try:
        tool.check_edit(arguments, edited)
    except ToolArgumentError as exc:
        if inbox:
            raise AnswerError(
                f"edited arguments for tool {call.name!r} are invalid: {exc}"
            ) from exc
        raise AnswerError(
            f"edited arguments for interrupt {interrupt.id} ({interrupt.name}) are invalid: "
            f"{exc}; the interrupt is still pending: answer it again with arguments that fit "
            "the tool's schema"
        ) from exc
    name = interrupt.name.split(SEPARATOR)[-1]  # a lifted Confirm's name carries its path
    if interrupt.source == "intervention" and name.startswith("confirm:"):
        edited_call = ToolCall(call.id, call.name, dict(arguments))
        await recheck_edit(owner, name, BeforeToolCall(owner, edited_call, tool))


def same(a: Any, b: Any) -> bool:
    """Equal as JSON (``1`` and ``True`` differ)."""
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
