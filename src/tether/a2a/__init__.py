"""A2A (agent to agent, protocol ``lf.a2a.v1``, the official ``a2a-sdk``): serving an agent,
and calling remote agents as governed tools.

Serving: ``tether serve --app module:factory`` mounts it (:func:`tether.a2a.routes.a2a_routes`):
the agent card at ``/.well-known/agent-card.json`` and the JSON-RPC binding at ``/a2a``.
Each task is one durable tether session (task id = session id); the SDK gives the
JSON-RPC dispatcher, the SSE streams, the protocol models and the errors, and this
package maps them onto sessions (docs/design.md section 15).

Calling: ``RemoteAgent(url)`` goes in ``Agent(tools=[...])``, imported only when the name
is first used. Both need the extra ``tether[a2a]``; nothing here is imported by
``import tether``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.a2a.remote import RemoteAgent

META_KEY = "a2a"
"""The session metadata key of a served task: ``{"context_id": ..., "caller": ...}``."""

__all__ = ["META_KEY", "RemoteAgent"]


def __getattr__(name: str) -> Any:
    if name == "RemoteAgent":
        from tether.a2a.remote import RemoteAgent

        return RemoteAgent
    raise AttributeError(f"module 'tether.a2a' has no attribute {name!r}")
