"""AGENT-HOOKS-0.1 host for tether, built on the ``agent-hooks-sdk`` emitter.

Install with the ``agent-hooks`` extra. ``Agent(agent_hooks=[...], ...)`` and
``Agent.from_declaration(...)`` build an :class:`AgentHooksHost`; see
docs/design.md section 4, item 4.
"""

from tether.control.agent_hooks.declaration import (
    DURABLE_RESOLVER,
    PYTHON_KIND,
    emitter_from_declaration,
    tether_registry,
    tether_surface,
)
from tether.control.agent_hooks.durable import DurableApprovals, args_hash
from tether.control.agent_hooks.host import AgentHooksHost
from tether.control.agent_hooks.interceptors import AllowAll, as_interceptor
from tether.control.agent_hooks.records import RecordTrail

__all__ = [
    "DURABLE_RESOLVER",
    "PYTHON_KIND",
    "AgentHooksHost",
    "AllowAll",
    "DurableApprovals",
    "RecordTrail",
    "args_hash",
    "as_interceptor",
    "emitter_from_declaration",
    "tether_registry",
    "tether_surface",
]
