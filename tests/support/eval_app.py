"""``--app eval_app:...`` for ``tether eval``: the scripted agents of eval_agents.py as
module:factory specs (``make_agent`` follows the prompt; ``echo`` never calls a tool)."""

from __future__ import annotations

from typing import Any

from eval_agents import Policy, delete_file, script, search, send

from tether import Agent
from tether.messages import Message
from tether.models import ScriptedModel


def make_agent(**options: Any) -> Agent:
    """``search X`` searches, ``delete X`` is denied, else it echoes (eval_agents.script)."""
    options.setdefault("store", None)
    return Agent(
        model=ScriptedModel(script),
        tools=[search, delete_file, send],
        interventions=[Policy()],
        **options,
    )


def _echo(messages: list[Message], _specs: list[dict[str, Any]]) -> str:
    return "echo: " + next(m.text for m in messages if m.role == "user")


def echo(**options: Any) -> Agent:
    """A changed agent: answers every prompt without a tool (its trajectories regress)."""
    options.setdefault("store", None)
    return Agent(model=ScriptedModel(_echo), tools=[search, delete_file, send], **options)


def broken(**options: Any) -> Agent:
    raise RuntimeError("no configuration")
