"""An agent served by ``tether mcp serve --app mcp_served_app:factory`` in the tests.

Its scripted model deletes the paths given as prompt (one batch); a Confirm asks before every
delete. Deleting appends the path to $SERVED_LOG; $SERVED_DB (if set) is its store.
"""

from __future__ import annotations

import os
from typing import Any

from tether import Agent, tool
from tether.control import BeforeToolCall, Confirm, InterventionHandler
from tether.durable import SQLiteStore
from tether.models import ScriptedModel


class ConfirmDeletes(InterventionHandler):
    def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
        return Confirm(f"delete {event.tool_call.arguments.get('path')}?")


@tool
def delete(path: str) -> str:
    """Delete a file."""
    with open(os.environ["SERVED_LOG"], "a", encoding="utf-8") as log:
        log.write(path + "\n")
    return f"deleted {path}"


def script(messages: list[Any], specs: list[dict[str, Any]]) -> Any:
    if messages[-1].role == "user":  # one delete per path of the prompt, in one batch
        paths = messages[-1].text.split()
        return {"tool_calls": [{"name": "delete", "args": {"path": p}} for p in paths]}
    return "done: " + " + ".join(r.content for r in messages[-1].tool_results)


def factory(session_id: str) -> Agent:
    db = os.environ.get("SERVED_DB")
    return Agent(
        ScriptedModel(script),
        tools=[delete],
        interventions=[ConfirmDeletes()],
        store=SQLiteStore(db) if db else None,
        session_id=session_id,
    )
