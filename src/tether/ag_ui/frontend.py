"""Front-end tools (``RunAgentInput.tools``): offered to the model like any tool, run by
the application on the other side of the protocol.

A call to one goes through the agent's whole policy first (BeforeToolCall hooks,
interventions and their Confirm, AGENT-HOOKS, limits), like any tool call; then the tool
suspends the run with a durable interrupt (``frontend_tool``, keyed by the call id, as
``ToolContext.interrupt`` does). The run ends as an AG-UI success whose
``pendingToolCallIds`` names the call; the tool message answering it in the next input is
that interrupt's answer, so the re-run of the call returns it and it is journaled as the
call's result like any other.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from tether.ag_ui.interrupts import FRONTEND
from tether.errors import ConfigurationError
from tether.tools.base import Tool
from tether.tools.context import ToolContext

if TYPE_CHECKING:
    from ag_ui.core import Tool as AgUiTool

MAX_TOOLS: Final = 64
MAX_DESCRIPTION: Final = 4096
CONTEXT_KEY: Final = "__frontend_context__"
TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


class FrontendTool(Tool):
    """A tool the front end runs: its call suspends the run until the result arrives."""

    untrusted_schema = True  # the client's schema: validated off the event loop, bounded

    def __init__(self, definition: AgUiTool) -> None:
        from tether.mcp.validation import schema_validator

        name = definition.name
        schema = definition.parameters if definition.parameters else {"type": "object"}
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ConfigurationError(
                f"front-end tool {name[:64]!r}: its parameters must be a JSON schema of type "
                "'object'"
            )
        try:
            validate = schema_validator(schema, server="front end", tool=name)
        except ConfigurationError:
            raise ConfigurationError(
                f"front-end tool {name[:64]!r}: its parameters are not a valid JSON schema"
            ) from None

        def run(**arguments: Any) -> str:
            context = arguments.pop(CONTEXT_KEY)
            assert isinstance(context, ToolContext)
            answer = context.interrupt(FRONTEND, {"tool": name, "arguments": arguments})
            return answer if isinstance(answer, str) else str(answer)

        run.__name__ = name
        self._setup(
            run,
            name,
            definition.description[:MAX_DESCRIPTION],
            dict(schema),
            validate,
            CONTEXT_KEY,
            read_only=False,
            path_params=(),
            interactive=True,
            idempotent=True,
            reconcile=None,
            timeout=None,
        )


def frontend_tools(definitions: list[AgUiTool] | None, taken: set[str]) -> list[Tool]:
    """The input's tools as FrontendTools; ConfigurationError when there are too many,
    a name is not a valid tool name or is one of the agent's own tools (``taken``)."""
    if not definitions:
        return []
    if len(definitions) > MAX_TOOLS:
        raise ConfigurationError(f"at most {MAX_TOOLS} front-end tools, got {len(definitions)}")
    seen: set[str] = set()
    out: list[Tool] = []
    for definition in definitions:
        name = definition.name
        if name in taken or name in seen:
            raise ConfigurationError(
                f"front-end tool {name[:64]!r} has the name of "
                + ("one of the agent's own tools" if name in taken else "another front-end tool")
            )
        seen.add(name)
        if not TOOL_NAME.fullmatch(name):
            raise ConfigurationError(
                f"front-end tool name {name[:64]!r} is not valid: use 1-64 letters, digits, "
                "'_' or '-'"
            )
        out.append(FrontendTool(definition))
    return out
