"""``--app module:factory``: the one loader behind ``tether serve``, ``tether worker`` and
``tether approvals approve --edit``."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.agent import Agent

AppFactory = Callable[..., "Agent"]
"""``factory(session_id=...) -> Agent``: the session's agent (its tools are code)."""


def load_factory(spec: str) -> AppFactory:
    """``module:factory`` -> the callable. The current directory is importable, so
    ``--app myapp:make_agent`` finds ``./myapp.py`` as ``python -m`` would.

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
    return factory  # type: ignore[no-any-return]


def build_agent(spec: str, session_id: str) -> Agent:
    """``load_factory(spec)(session_id=session_id)``; a failing factory is a
    ConfigurationError naming the spec and the session."""
    factory = load_factory(spec)
    try:
        return factory(session_id=session_id)
    except Exception as exc:
        raise ConfigurationError(
            f"cannot build the agent of session {session_id!r} with {spec}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
