"""Agent: validates its configuration into a frozen Runtime, and runs it (see running.py).

The invoke / stream / resume entry points and the session skeleton are in running.py;
the loop is in loop.py; what an invocation runs with is ``agent.runtime`` (runtime.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from tether._agent_setup import (
    REBUILT,
    build_runtime,
    check_limits,
    check_name,
    check_scalars,
    listed,
    reconfigured,
    resolve_model,
    resolve_store,
)
from tether.control.events import AgentInitialized, HookEvent
from tether.control.middleware import ModelMiddleware, ToolMiddleware
from tether.control.registry import HookOrder, HookProvider
from tether.conversation import Conversation
from tether.errors import AgentBusyError, ConfigurationError
from tether.execution import Execution
from tether.limits import DEFAULT_LIMITS, IterationBudget, Limits
from tether.messages import Message
from tether.models.base import Model
from tether.prompts import Prompt
from tether.running import Running
from tether.session_ids import validate_session_id
from tether.tools import Tool, ToolSource

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from agent_hooks import HostRegistry

    from tether.control.agent_hooks import AgentHooksHost
    from tether.control.audit import ApprovalPolicy, AuditTrail
    from tether.control.interventions import ConfirmCallback, InterventionHandler
    from tether.control.registry import HookRegistry
    from tether.durable import Store
    from tether.events import StreamObserver

__all__ = ["Agent", "Prompt"]

E = TypeVar("E", bound=HookEvent)
Middleware: TypeAlias = ModelMiddleware | ToolMiddleware

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}")
_FIXED = frozenset(
    {
        "hooks",
        "interventions",
        "middleware",
        "store",
        "agent_hooks",
        "approvals",
        "execution",
        "session_id",
        "runtime",
        "tool_map",
        "tool_specs",
        "tool_sources",
        "observers",
        "audit_sink",
        "buffer_output",
        "conversation",
        "path",
    }
)


class Agent(Running):
    """A tool-using agent: a validated :class:`~tether.runtime.Runtime` plus one
    :class:`Conversation`, one invocation at a time.

    Invoke it with ``agent(prompt)`` / ``agent.run(prompt)`` (sync),
    ``await agent.invoke_async(prompt)`` or ``async for event in agent.stream(prompt)``;
    all three drive the same loop. The conversation is kept across invocations
    until :meth:`reset`. Setting ``model``, ``tools``, ``system_prompt``, ``limits``,
    ``budget``, ``confirm`` or ``name`` validates the value and rebuilds the runtime
    (from the next run on); the rest of the configuration is fixed: use :meth:`clone`.
    """

    _given: dict[str, Any]
    _explicit_session: str | None
    _registered: list[tuple[type[HookEvent], Callable[..., Any], int]]

    def __init__(
        self,
        model: Model | str | None = None,
        *,
        tools: Iterable[Tool | Callable[..., Any] | ToolSource] = (),
        system_prompt: str | None = None,
        hooks: Iterable[HookProvider] = (),
        interventions: Iterable[InterventionHandler] = (),
        middleware: Iterable[Middleware] = (),
        limits: Limits | None = DEFAULT_LIMITS,
        budget: IterationBudget | None = None,
        confirm: ConfirmCallback | None = None,
        session_id: str | None = None,
        store: Store | Literal["default"] | None = "default",
        state: dict[str, Any] | None = None,
        agent_hooks: AgentHooksHost | Iterable[Any] | None = None,
        approvals: ApprovalPolicy | None = None,
        execution: Execution | None = None,
        name: str | None = None,
    ) -> None:
        check_name(name)
        check_scalars(system_prompt, budget, confirm, approvals)
        check_limits(limits)
        if execution is not None and not isinstance(execution, Execution):
            raise ConfigurationError(
                f"execution= takes an Execution(...), got {type(execution).__name__}"
            )
        if session_id is not None:
            validate_session_id(session_id)
        if state is not None and not isinstance(state, dict):
            raise ConfigurationError(f"state= takes a dict, got {type(state).__name__}")
        given: dict[str, Any] = {
            "model": resolve_model(model),
            "tools": listed(
                "tools", tools, "a list of tools (functions, @tool Tools, MCP servers)"
            ),
            "system_prompt": system_prompt,
            "hooks": listed("hooks", hooks, "a list of HookProvider objects"),
            "interventions": listed(
                "interventions", interventions, "a list of InterventionHandler objects"
            ),
            "middleware": listed(
                "middleware", middleware, "a list of ModelMiddleware / ToolMiddleware"
            ),
            "limits": limits,
            "budget": budget,
            "confirm": confirm,
            "store": store,
            "agent_hooks": agent_hooks,
            "approvals": approvals,
            "execution": execution,
            "name": name,
        }
        conversation = Conversation(session_id or _new_session_id())
        if state is not None:
            conversation.state = state
        resolved_store = resolve_store(store, session_id)
        if resolved_store is None:
            conversation.synced_version = 0
        object.__setattr__(self, "_given", given)
        object.__setattr__(self, "_explicit_session", session_id)
        object.__setattr__(self, "_registered", [])
        Running.__init__(self, build_runtime(given, resolved_store), conversation)
        self.runtime.hooks.emit_sync(AgentInitialized(self))

    # -- configuration: validated, rebuilt, never half-applied -------------------------

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr in REBUILT:
            self._reconfigure(attr, value)
        elif attr in _FIXED:
            raise ConfigurationError(
                f"agent.{attr} is fixed when the Agent is built (it shapes the agent's hooks, "
                f"policy or session): build a new Agent, or use agent.clone({attr}=...)"
                if attr in self._given or attr == "session_id"
                else f"agent.{attr} is read-only (it is derived from the agent's configuration)"
            )
        else:
            object.__setattr__(self, attr, value)

    def _reconfigure(self, attr: str, value: Any) -> None:
        runtime, kept = reconfigured(self.runtime, self._given, attr, value)
        self._given[attr] = kept  # only once the new runtime is built: never half-applied
        object.__setattr__(self, "runtime", runtime)

    def clone(self, **changes: Any) -> Agent:
        """A new Agent with this one's configuration, ``changes`` applied (any constructor
        argument, validated the same way), and a fresh conversation (the same session id
        only when this agent was given one and ``changes`` gives none). Hooks registered
        with :meth:`on` come along; state does not (pass ``state=``)."""
        unknown = sorted(set(changes) - set(self._given) - {"session_id", "state"})
        if unknown:
            raise ConfigurationError(
                f"agent.clone() takes Agent's constructor arguments, got {', '.join(unknown)}"
            )
        arguments = dict(self._given)
        arguments["tools"] = list(self.runtime.toolset.items)
        session = self._explicit_session
        if session is not None:
            arguments["session_id"] = session
        arguments.update(changes)
        twin = Agent(**arguments)
        for event_type, callback, order in self._registered:
            twin.on(event_type, order)(callback)
        return twin

    # -- views of the runtime -------------------------------------------------------

    @property
    def model(self) -> Model:
        """The model this agent calls (settable: validated like ``model=``)."""
        return self.runtime.model

    @property
    def tools(self) -> list[Tool]:
        """The tools offered now (settable, unless a source such as an MCP server
        changes them: then use :meth:`clone`)."""
        return self.runtime.toolset.tools

    @property
    def tool_map(self) -> dict[str, Tool]:
        """The tools by name (read-only view of ``runtime.toolset``)."""
        return self.runtime.toolset.by_name

    @property
    def tool_specs(self) -> list[dict[str, Any]]:
        """The tool specs a model call sends (read-only view of ``runtime.toolset``)."""
        return self.runtime.toolset.specs

    @property
    def tool_sources(self) -> list[ToolSource]:
        """Sources of several tools (e.g. MCP servers), closed by :meth:`close`."""
        return self.runtime.toolset.sources

    @property
    def system_prompt(self) -> str | None:
        """The system prompt (settable)."""
        return self.runtime.system_prompt

    @property
    def limits(self) -> Limits | None:
        """This agent's ceilings per invocation: by default ``Limits(turns=90)``
        (``DEFAULT_MAX_TURNS``) unless a budget is given; ``limits=None`` runs unbounded."""
        return self.runtime.limits

    @property
    def budget(self) -> IterationBudget | None:
        return self.runtime.budget

    @property
    def confirm(self) -> ConfirmCallback | None:
        return self.runtime.confirm

    @property
    def execution(self) -> Execution:
        return self.runtime.execution

    @property
    def hooks(self) -> HookRegistry:
        """The hook registry (add hooks with :meth:`on` or ``hooks.add_provider``)."""
        return self.runtime.hooks

    @property
    def interventions(self) -> tuple[InterventionHandler, ...]:
        """The policy handlers this agent runs."""
        return self.runtime.interventions

    @property
    def store(self) -> Store | None:
        return self.runtime.store

    @property
    def agent_hooks(self) -> AgentHooksHost | None:
        """The AGENT-HOOKS-0.1 host (a HookProvider) or None."""
        return self.runtime.agent_hooks

    @property
    def audit_sink(self) -> AuditTrail | None:
        """The audit trail (with a store), or None."""
        return self.runtime.audit

    @property
    def buffer_output(self) -> bool:
        return self.runtime.buffer_output

    @property
    def observers(self) -> list[StreamObserver]:
        """Called with every stream event of a run before it is yielded (tether.observe)."""
        return self.runtime.observers

    @property
    def executor(self) -> Executor:
        """The bounded thread pool that runs sync tools (created on first use)."""
        return self.runtime.threads.get()

    @property
    def name(self) -> str | None:
        """This agent's name (None: unnamed): ``gen_ai.agent.name`` and the span name
        ``invoke_agent {name}`` in traces, the AGENT-HOOKS ``agent.id``, and each run's
        start in the session journal (the timeline's "run started" row)."""
        return self.runtime.name

    # -- the conversation (views of self.conversation) -------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation so far."""
        return self.conversation.messages

    @messages.setter
    def messages(self, messages: list[Message]) -> None:
        self.conversation.messages = messages
        self.conversation.compaction = None  # it described the replaced list
        self.conversation.estimate = None

    @property
    def state(self) -> dict[str, Any]:
        """The session state that tools read and write through ``ToolContext.state``."""
        return self.conversation.state

    @state.setter
    def state(self, state: dict[str, Any]) -> None:
        self.conversation.state = state

    @classmethod
    def from_declaration(
        cls, document: Any, registry: HostRegistry | None = None, **options: Any
    ) -> Agent:
        """An Agent whose interceptors come from an AGENT-HOOKS host declaration
        (``agent-hooks.declaration.json``: a path, JSON text or parsed value), resolved
        against ``registry`` (default: tether's, see ``tether.control.agent_hooks``).
        A refused document raises the loader's ``DeclarationError`` before any run."""
        from tether.control.agent_hooks import AgentHooksHost

        if "agent_hooks" in options:
            raise ConfigurationError(
                "Agent.from_declaration(...) attaches the declaration's interceptors; "
                "do not pass agent_hooks= as well (an agent takes one AGENT-HOOKS host)"
            )
        return cls(agent_hooks=AgentHooksHost.from_declaration(document, registry), **options)

    def on(
        self, event_type: type[E], order: int = HookOrder.DEFAULT
    ) -> Callable[[Callable[[E], Any]], Callable[[E], Any]]:
        """Decorator: ``@agent.on(BeforeToolCall)`` registers the function as a hook."""

        def register(callback: Callable[[E], Any]) -> Callable[[E], Any]:
            self.runtime.hooks.add(event_type, callback, order)
            self._registered.append((event_type, callback, order))
            return callback

        return register

    def as_tool(
        self,
        name: str,
        description: str | None = None,
        *,
        output_type: Any = None,
    ) -> Tool:
        """This agent as a tool of another agent (see ``tether.agents.as_tool``)."""
        from tether.agents import as_tool

        return as_tool(self, name=name, description=description, output_type=output_type)

    __call__ = Running.run

    def reset(self) -> None:
        """Start a fresh conversation (new session id unless one was given, empty state)."""
        if self._lock.locked():
            raise AgentBusyError(f"agent (session {self.session_id}) cannot reset while it runs")
        session_id = self._explicit_session or _new_session_id()
        self.conversation.clear(session_id)

    def close(self) -> None:
        """Release the tool thread pool and close tool sources such as MCP connections,
        this agent's and its whole tree's (sub-agents, workflow nodes), each once (the
        agents stay usable: both come back on first use)."""
        from tether.agents.subagent import close_tree

        close_tree(self)

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = self.runtime.name
        named = "" if name is None else f"name={name!r}, "
        return f"Agent({named}model={self.model.name!r}, tools={[t.name for t in self.tools]}, session_id={self.session_id!r})"


def _new_session_id() -> str:
    return os.urandom(16).hex()
