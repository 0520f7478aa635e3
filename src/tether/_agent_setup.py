"""Resolving the Agent's model and store arguments (kept out of agent.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from tether.errors import ConfigurationError
from tether.models.base import Model

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.audit import ApprovalPolicy, AuditTrail
    from tether.durable import Store


def resolve_store(store: Store | Literal["default"] | None, session_id: str | None) -> Store | None:
    """``"default"``: ./tether.db when a session id is given, else in memory only."""
    if store == "default":
        if session_id is None:
            return None
        from tether.durable import SQLiteStore

        return SQLiteStore("tether.db")
    return store


def resolve_model(model: Model | str | None) -> Model:
    if model is None:
        model = os.environ.get("TETHER_MODEL") or None
    if model is None:
        raise ConfigurationError(
            "Agent() needs a model. Choose one of:\n"
            "  - a model object: Agent(model=ScriptedModel([...])) (deterministic, for tests and demos;\n"
            "    from tether.models import ScriptedModel);\n"
            "  - a model string: Agent(model='scripted:turns.json'), or set the TETHER_MODEL\n"
            "    environment variable to one."
        )
    if isinstance(model, str):
        from tether.models.registry import model_from_string

        return model_from_string(model)
    if not isinstance(model, Model):
        raise ConfigurationError(
            f"model must be a Model (an object with .name and .stream(request)) or a model string, "
            f"got {type(model).__name__}"
        )
    return model


def install_audit(agent: Agent, policy: ApprovalPolicy | None) -> AuditTrail | None:
    """With a store: the agent's AuditTrail (approvals, audit log); see tether.control.audit."""
    if agent.store is None:
        return None
    from tether.control.audit import install_audit as install

    return install(agent, policy)
