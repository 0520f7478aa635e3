"""Automatic tracing: an AgentRef is traced from its first run that starts while a global
tracer provider is set, whether the provider was set before or after ``Agent()``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.agent_ref import AgentRef

OFF_ENV = "TETHER_TRACING"
"""Set to ``off`` (or ``0``/``false``) to keep agents untraced despite a global provider."""


def auto_instrument(agent: AgentRef) -> None:
    """Attach a default :class:`~tether.observe.Tracing` (the application configured a
    global tracer provider: the agent checked as a run started), unless the agent is
    traced already (a Tracing in ``hooks=[...]``, ``instrument()``) or ``TETHER_TRACING=off``."""
    if os.environ.get(OFF_ENV, "").strip().lower() in ("off", "0", "false", "no"):
        return
    from tether.observe.tracing import instrument, is_traced

    if not is_traced(agent):
        instrument(agent)
