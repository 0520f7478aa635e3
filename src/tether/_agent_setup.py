"""Validating the Agent's arguments and building its Runtime from them."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from tether.errors import ConfigurationError
from tether.models.base import Model

if TYPE_CHECKING:
    from tether.control.agent_hooks import AgentHooksHost
    from tether.durable import Store
    from tether.limits import IterationBudget, Limits
    from tether.runtime import Runtime

REBUILT = frozenset({"model", "tools", "system_prompt", "limits", "budget", "confirm", "name"})
"""Agent attributes a user may set: each is validated and the runtime rebuilt."""


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}")


def check_name(name: Any) -> None:
    """An agent's name: 1 to 64 letters, digits, spaces and '_.:-' (or None)."""
    if name is not None and (not isinstance(name, str) or not _NAME.fullmatch(name)):
        raise ConfigurationError(
            "an agent's name is 1 to 64 letters, digits, spaces and '_.:-', starting with "
            f"a letter or digit, got {str(name)[:80]!r}"
        )


def check_limits(limits: Any) -> None:
    from tether.limits import Limits

    if limits is not None and not isinstance(limits, Limits):
        raise ConfigurationError(
            f"limits= takes a Limits(...) or None, got {type(limits).__name__}"
        )


def reconfigured(
    runtime: Runtime, given: dict[str, Any], attr: str, value: Any
) -> tuple[Runtime, Any]:
    """The runtime with one of the :data:`REBUILT` settings changed to ``value``, checked
    as the constructor checks it, and the value to remember for clones; raises
    ConfigurationError (nothing changed) for a bad value."""
    if attr == "name":
        check_name(value)
        return runtime.replace(name=value), value
    if attr == "model":
        model = resolve_model(value)
        return runtime.replace(model=model), model
    if attr == "tools":
        from tether.tools.toolset import Toolset

        items = listed("tools", value, "a list of tools (functions, @tool Tools, MCP servers)")
        toolset = Toolset(items)
        if toolset.changes or runtime.toolset.changes:
            raise ConfigurationError(
                "agent.tools cannot be replaced on an agent whose tools come from a "
                "source that changes (an MCP server): build a new Agent, or use "
                "agent.clone(tools=[...])"
            )
        return runtime.replace(toolset=toolset), items
    check_scalars(
        value if attr == "system_prompt" else None,
        value if attr == "budget" else None,
        value if attr == "confirm" else None,
        None,
    )
    if attr == "limits":
        check_limits(value)
        return runtime.replace(limits=effective_limits(value, given["budget"])), value
    if attr == "budget":
        limits = effective_limits(given["limits"], value)
        return runtime.replace(budget=value, limits=limits), value
    return runtime.replace(**{attr: value}), value


def effective_limits(limits: Limits | None, budget: IterationBudget | None) -> Limits | None:
    """The default cap of model calls applies unless a budget is given (it caps instead)."""
    from tether.limits import DEFAULT_LIMITS

    return None if limits is DEFAULT_LIMITS and budget is not None else limits


def build_runtime(given: dict[str, Any], store: Store | None) -> Runtime:
    """The Runtime of an Agent built with the (checked) arguments ``given``."""
    from tether.control.middleware import ModelMiddleware, ToolMiddleware
    from tether.control.registry import HookRegistry
    from tether.execution import Execution
    from tether.runtime import Runtime
    from tether.tools.threads import ToolPool
    from tether.tools.toolset import Toolset

    hooks = HookRegistry()
    toolset = Toolset(given["tools"])
    toolset.register_hooks(hooks)  # an MCP server's tools may change: taken up per model call
    middleware = given["middleware"]
    bad = [m for m in middleware if not isinstance(m, ModelMiddleware | ToolMiddleware)]
    if bad:
        raise ConfigurationError(
            f"middleware=[...] takes ModelMiddleware or ToolMiddleware instances, got {bad[0]!r}"
        )
    for provider in given["hooks"]:
        if is_agent_hooks_host(provider):
            raise ConfigurationError(
                "an AgentHooksHost was passed in hooks=[...]; attach AGENT-HOOKS "
                "interceptors through agent_hooks= (one host per agent)"
            )
        hooks.add_provider(provider)
    interventions = tuple(given["interventions"])
    if interventions:
        from tether.control.interventions import InterventionRunner

        hooks.add_provider(InterventionRunner(interventions))
    host = agent_hooks_host(given["agent_hooks"])
    if host is not None:
        hooks.add_provider(host)
    execution = given["execution"] or Execution()
    buffer = execution.buffer_output
    audit = None
    if store is not None:
        from tether.control.audit import AuditTrail

        audit = AuditTrail(store, toolset, given["approvals"])
        hooks.add_provider(audit)
    return Runtime(
        model=given["model"],
        toolset=toolset,
        system_prompt=given["system_prompt"],
        hooks=hooks,
        model_middleware=tuple(m for m in middleware if isinstance(m, ModelMiddleware)),
        tool_middleware=tuple(m for m in middleware if isinstance(m, ToolMiddleware)),
        interventions=interventions,
        limits=effective_limits(given["limits"], given["budget"]),
        budget=given["budget"],
        confirm=given["confirm"],
        store=store,
        audit=audit,
        agent_hooks=host,
        approvals=given["approvals"],
        execution=execution,
        buffer_output=host is not None if buffer is None else buffer,
        threads=ToolPool(execution.max_concurrency),
        name=given["name"],
    )


def is_agent_hooks_host(provider: object) -> bool:
    """True for an AgentHooksHost (checked without importing its module: a host object
    exists only once it is loaded)."""
    import sys

    module = sys.modules.get("tether.control.agent_hooks.host")
    host_type = getattr(module, "AgentHooksHost", None)
    return host_type is not None and isinstance(provider, host_type)


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


def agent_hooks_host(spec: AgentHooksHost | Iterable[Any] | None) -> AgentHooksHost | None:
    """The AGENT-HOOKS host given as ``agent_hooks=`` (a host, or interceptors as a list or
    a name -> interceptor mapping, which build a default host)."""
    if spec is None:
        return None
    try:
        from tether.control.agent_hooks import AgentHooksHost
    except ImportError as exc:
        raise ConfigurationError(
            f"agent_hooks= needs the AGENT-HOOKS SDK: pip install 'tether[agent-hooks]' ({exc})"
        ) from exc
    if isinstance(spec, AgentHooksHost):
        return spec
    if isinstance(spec, str | bytes) or not isinstance(spec, Iterable | Mapping):
        raise ConfigurationError(
            "agent_hooks= takes an AgentHooksHost(...), a list of interceptors or a "
            f"name -> interceptor mapping, got {type(spec).__name__}"
        )
    return AgentHooksHost(spec)


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
