"""An app whose provider fails for good with a secret in its error text:
``TetherPlugin(app="temporal_secret_app:agent_factory")``."""

from __future__ import annotations

from typing import Any

from tether import Agent
from tether.models import ScriptedModel
from tether.models.failover import FailoverReason, ProviderError

SECRET = "sk-temporal-SECRET-0042"


def agent_factory(session_id: str) -> Agent:
    def script(messages: list[Any], tools: list[dict[str, Any]]) -> dict[str, Any]:
        raise ProviderError(FailoverReason.AUTH, "scripted", f"key {SECRET} was refused")

    return Agent(model=ScriptedModel(script), session_id=session_id)
