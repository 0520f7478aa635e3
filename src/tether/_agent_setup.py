"""Resolving the Agent's model, store, session id and AGENT-HOOKS arguments."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from tether.errors import ConfigurationError
from tether.models.base import Model

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.agent_hooks import AgentHooksHost
    from tether.control.audit import ApprovalPolicy, AuditTrail
    from tether.durable import Store


def listed(param: str, value: Any, expected: str) -> list[Any]:
    """``value`` (an iterable argument) as a list, or a ConfigurationError naming ``param``."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        raise ConfigurationError(
            f"{param}= takes {expected}, got {type(value).__name__} ({_shown(value)})"
        )
    return list(value)


def check_scalars(system_prompt: Any, budget: Any, confirm: Any, approvals: Any) -> None:
    """The arguments stored as given: a wrong type fails here, not at the first run."""
    from tether.limits import IterationBudget

    if system_prompt is not None and not isinstance(system_prompt, str):
        _refuse("system_prompt", "a str or None", system_prompt)
    if budget is not None and not isinstance(budget, IterationBudget):
        _refuse(
            "budget",
            "an IterationBudget(total) or None (from tether import IterationBudget)",
            budget,
        )
    if confirm is not None and not callable(confirm):
        _refuse("confirm", "a callable (ConfirmRequest) -> bool (sync or async) or None", confirm)
    if approvals is not None:
        # Only imported when given: whoever built an ApprovalPolicy has imported it.
        from tether.control.audit import ApprovalPolicy

        if not isinstance(approvals, ApprovalPolicy):
            _refuse(
                "approvals",
                "an ApprovalPolicy(...) or None (from tether.control.audit import ApprovalPolicy)",
                approvals,
            )


def _refuse(param: str, expected: str, value: Any) -> None:
    raise ConfigurationError(
        f"{param}= takes {expected}, got {type(value).__name__} ({_shown(value)})"
    )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def resolve_store(store: Store | Literal["default"] | None, session_id: str | None) -> Store | None:
    """``"default"``: ./tether.db when a session id is given, else in memory only."""
    if store == "default":
        if session_id is None:
            return None
        from tether.durable import SQLiteStore

        return SQLiteStore("tether.db")
    if store is None:
        return None
    if isinstance(store, str | os.PathLike):
        raise ConfigurationError(
            f"store= takes a Store object, 'default' or None, got the path {os.fspath(store)!r}: "
            f"for a SQLite file pass store=SQLiteStore({os.fspath(store)!r}) "
            "(from tether.durable import SQLiteStore)"
        )
    from tether.durable.store import Store as StoreProtocol

    if not isinstance(store, StoreProtocol):
        raise ConfigurationError(
            f"store= takes a Store (SQLiteStore, PostgresStore, MemoryStore), 'default' or "
            f"None, got {type(store).__name__}"
        )
    return store


def attach_agent_hooks(
    agent: Agent, spec: AgentHooksHost | Iterable[Any] | None
) -> AgentHooksHost | None:
    """Attach the AGENT-HOOKS host given as ``agent_hooks=`` (a host, or interceptors
    as a list or a name -> interceptor mapping, which build a default host)."""
    if spec is None:
        return None
    try:
        from tether.control.agent_hooks import AgentHooksHost
    except ImportError as exc:
        raise ConfigurationError(
            f"agent_hooks= needs the AGENT-HOOKS SDK: pip install 'tether[agent-hooks]' ({exc})"
        ) from exc
    if isinstance(spec, AgentHooksHost):
        host = spec
    elif isinstance(spec, str | bytes) or not isinstance(spec, Iterable | Mapping):
        raise ConfigurationError(
            "agent_hooks= takes an AgentHooksHost(...), a list of interceptors or a "
            f"name -> interceptor mapping, got {type(spec).__name__}"
        )
    else:
        host = AgentHooksHost(spec)
    agent.hooks.add_provider(host)
    return host


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


def trace_if_configured(agent: Agent) -> None:
    """Start tracing ``agent`` (a run of it is starting and a global tracer provider is
    set: Agent._open checked), unless it is traced already or ``TETHER_TRACING=off``."""
    from tether.observe.auto import auto_instrument

    auto_instrument(agent)
