"""Automatic tracing: an Agent built while a global tracer provider is set is traced."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.agent import Agent

OFF_ENV = "TETHER_TRACING"
"""Set to ``off`` (or ``0``/``false``) to keep agents untraced despite a global provider."""


def auto_instrument(agent: Agent, providers: list[Any]) -> None:
    """Attach a default :class:`~tether.observe.Tracing` (the application configured a
    global tracer provider: tether._agent_setup checked), unless one was passed in ``hooks=[...]`` or ``TETHER_TRACING=off``."""
    if os.environ.get(OFF_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return
    from tether.observe.tracing import Tracing, instrument

    if any(isinstance(p, Tracing) for p in providers):
        return
    instrument(agent)
