"""``--app module:factory``: the one loader behind every host that serves an app's agents
(``tether serve``, ``tether worker``, ``tether mcp serve``, ``tether temporal worker``, A2A,
AG-UI, approvals' edit validation, policy checks, replays, evals).

A host never calls an app's factory itself: it holds an :class:`AppFactory` (``load_factory``
returns one; a host given a plain callable wraps it with :meth:`AppFactory.of`) and asks
it for an Agent with :meth:`AppFactory.build`. A factory may return an ``Agent`` or a
workflow (``tether.workflows``: its ``wf.agent`` is what runs); anything else is a
ConfigurationError naming the spec, the session and the type it got
(tests/ops/test_serve_workflow.py, tests/test_app_hosts.py).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.agent import Agent


class AppFactory:
    """An app's factory as hosts use it: ``build(session_id=...)`` -> the session's Agent
    (a returned workflow becomes its ``wf.agent``). ``label`` names it in errors (the
    ``--app`` spec, or the factory's qualified name)."""

    __slots__ = ("factory", "label")

    def __init__(self, factory: Callable[..., Any], label: str | None = None) -> None:
        if not callable(factory):
            raise ConfigurationError(
                f"an app factory must be callable (factory(session_id=...) returning an Agent "
                f"or a Workflow), got {type(factory).__name__}"
            )
        self.factory = factory
        self.label = label or getattr(factory, "__qualname__", None) or repr(factory)[:80]

    @classmethod
    def of(cls, factory: AppFactory | Callable[..., Any], label: str | None = None) -> AppFactory:
        """``factory`` as an AppFactory (itself when it is one already)."""
        return factory if isinstance(factory, AppFactory) else cls(factory, label)

    def build(self, session_id: str | None = None, **extra: Any) -> Agent:
        """``factory(session_id=session_id, **extra)`` as an Agent (``session_id`` is left
        out when None: an eval's factory may take none). The factory's own exception
        propagates; a result that is neither an Agent nor a workflow is a
        ConfigurationError."""
        kwargs = extra if session_id is None else {"session_id": session_id, **extra}
        return self.agent_of(self.factory(**kwargs), session_id)

    async def build_async(self, session_id: str | None = None, **extra: Any) -> Agent:
        """:meth:`build` for a factory that may be async (an eval's)."""
        kwargs = extra if session_id is None else {"session_id": session_id, **extra}
        built = self.factory(**kwargs)
        if inspect.isawaitable(built):
            built = await built
        return self.agent_of(built, session_id)

    def agent_of(self, built: Any, session_id: str | None) -> Agent:
        """What the factory returned, as the Agent a host runs."""
        from tether.agent import Agent
        from tether.workflows import Workflow

        if isinstance(built, Agent):
            return built
        if isinstance(built, Workflow):
            return built.agent
        if inspect.iscoroutine(built):  # an async factory where a host builds in sync
            built.close()
        session = "" if session_id is None else f" for session {session_id!r}"
        raise ConfigurationError(
            f"{self.label} returned {type(built).__name__}, not an Agent or a Workflow"
            f"{session}: a factory returns the session's Agent, or a workflow "
            "(tether.workflows) to serve its wf.agent"
        )


Factory = AppFactory | Callable[..., Any]
"""What a host takes: an AppFactory, or a plain ``factory(session_id=...)`` it wraps."""


def load_factory(spec: str) -> AppFactory:
    """``module:factory`` -> its AppFactory. The current directory is importable, so
    ``--app myapp:make_agent`` finds ``./myapp.py`` as ``python -m`` would. A factory
    annotated to return something other than an Agent or a workflow is refused here.

    Raises ConfigurationError naming the spec and what is wrong with it.
    """
    module, _, name = spec.partition(":")
    if not module or not name:
        raise ConfigurationError(f"{spec!r}: use module:factory, e.g. myapp:make_agent")
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)
    try:
        loaded = importlib.import_module(module)
    except Exception as exc:  # any error while importing the app is the app's, not ours
        raise ConfigurationError(
            f"cannot import {module!r} for {spec} (from {here}): {type(exc).__name__}: {exc}"
        ) from exc
    factory: Any = getattr(loaded, name, None)
    if factory is None:
        raise ConfigurationError(f"{spec}: module {module!r} has no attribute {name!r}")
    if not callable(factory):
        raise ConfigurationError(f"{spec}: {name} is not callable")
    _check_annotation(factory, spec)
    return AppFactory(factory, spec)


def _check_annotation(factory: Any, spec: str) -> None:
    """Refuse, before anything is built, a factory annotated to return a class that is
    neither an Agent nor a workflow (an unannotated one is checked when it builds)."""
    import typing

    from tether.agent import Agent
    from tether.workflows import Workflow

    try:
        returns = typing.get_type_hints(factory).get("return")
    except Exception:  # unresolvable annotations: the build checks what it returns
        return
    if returns in (Any, object) or not isinstance(returns, type):  # Any is a class since 3.11
        return
    if not issubclass(returns, (Agent, Workflow)):
        raise ConfigurationError(
            f"{spec} is annotated to return {returns.__name__}, not an Agent or a Workflow: "
            "a factory returns the session's Agent, or a workflow (tether.workflows)"
        )


def build_agent(spec: str, session_id: str) -> Agent:
    """``load_factory(spec).build(session_id)``; a failing factory is a ConfigurationError
    naming the spec and the session."""
    factory = load_factory(spec)
    try:
        built = factory.factory(session_id=session_id)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot build the agent of session {session_id!r} with {spec}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return factory.agent_of(built, session_id)
