"""Serving an agent over A2A (protocol ``lf.a2a.v1``, the official ``a2a-sdk``).

``tether serve --app module:factory`` mounts it (:func:`tether.a2a.routes.a2a_routes`):
the agent card at ``/.well-known/agent-card.json`` and the JSON-RPC binding at ``/a2a``.
Each task is one durable tether session (task id = session id); the SDK gives the
JSON-RPC dispatcher, the SSE streams, the protocol models and the errors, and this
package maps them onto sessions (docs/design.md section 15). Needs the extra
``tether[a2a]``; nothing here is imported by ``import tether``.
"""

from __future__ import annotations

META_KEY = "a2a"
"""The session metadata key of a served task: ``{"context_id": ..., "caller": ...}``."""

__all__ = ["META_KEY"]
