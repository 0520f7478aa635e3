"""The edit rule: an approver's edited call judged again by the policies ahead of the
Confirm that asked, so what a human approves is exactly what runs."""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from tether.control.interventions.handler import (
    Deny,
    Guide,
    InterventionHandler,
    Transform,
    overrides,
)
from tether.errors import AnswerError
from tether.messages import ToolCall

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef
    from tether.control.events import BeforeToolCall


async def recheck_edit(agent: AgentRef, confirm_name: str, event: BeforeToolCall) -> None:
    """The edit rule: the policies ahead of the Confirm ``confirm_name`` judge the edited
    call in ``event`` again; a Deny, a Guide or a Transform that changes it refuses the
    edit (AnswerError naming the policy and the fields), since what a human approves must
    be exactly what runs. Confirms ahead were answered already; they do not re-ask."""
    label = confirm_name.removeprefix("confirm:")
    ahead: list[InterventionHandler] = []
    for handler in agent.runtime.interventions:
        if handler.label == label:
            break
        if overrides(handler, "before_tool_call"):
            ahead.append(handler)
    call: ToolCall = event.tool_call
    for handler in ahead:
        try:
            action = handler.before_tool_call(event)
            if inspect.isawaitable(action):
                action = await action
            rewritten = action.fn(call) if isinstance(action, Transform) else call
        except Exception as exc:
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} failed on it "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        if isinstance(action, Deny | Guide):
            why = action.reason if isinstance(action, Deny) else action.feedback
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} would not let it run "
                f"({why}); edit it within the policy or deny the call"
            )
        if not isinstance(rewritten, ToolCall):
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r}'s Transform returned "
                f"{type(rewritten).__name__}, not a ToolCall"
            )
        changed = _changed_fields(call, rewritten)
        if changed:
            raise AnswerError(
                f"the edited call was refused: policy {handler.label!r} would rewrite "
                f"{', '.join(changed)} after your approval, so what you approved would not be "
                "what runs; edit within the policy (leave those fields as shown) or deny"
            )


def _changed_fields(before: ToolCall, after: ToolCall) -> list[str]:
    """What a Transform changed: the tool's name, and each argument it set or dropped."""
    out = [] if after.name == before.name else [f"the tool ({before.name!r} -> {after.name!r})"]
    for key in sorted(set(before.arguments) | set(after.arguments)):
        was, now = before.arguments.get(key, _ABSENT), after.arguments.get(key, _ABSENT)
        if (was is _ABSENT) != (now is _ABSENT) or _json(was) != _json(now):
            out.append(f"field {key!r}")
    return out


_ABSENT: Any = object()


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)
