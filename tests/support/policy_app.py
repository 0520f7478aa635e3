"""``--app policy_app:make_agent`` for ``tether policy check``: the recorded tools of
policy_store.py under a new rule, NoEtc (deny deleting under /etc/, naming the path)."""

from __future__ import annotations

from typing import Any

from policy_store import TOOLS

from tether import Agent
from tether.control import Deny, InterventionHandler
from tether.models import ScriptedModel


class NoEtc(InterventionHandler):
    """The new rule: nothing under /etc/ is deleted."""

    def before_tool_call(self, event: Any) -> Deny | None:
        call = event.tool_call
        if call.name == "delete_file" and str(call.arguments["path"]).startswith("/etc/"):
            return Deny(f"{call.arguments['path']} is under /etc/")
        return None


def make_agent(session_id: str | None = None) -> Agent:
    return Agent(model=ScriptedModel([]), tools=TOOLS, interventions=[NoEtc()], store=None)


def not_an_agent(session_id: str | None = None) -> Any:
    return {"model": "scripted"}


def broken(session_id: str | None = None) -> Agent:
    raise RuntimeError("no configuration for \x1b[31mprod")
