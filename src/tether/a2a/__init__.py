"""A2A (agent to agent, protocol ``lf.a2a.v1``): remote A2A agents as governed tools.

``RemoteAgent(url)`` goes in ``Agent(tools=[...])``; it needs the ``tether[a2a]`` extra
(``a2a-sdk``), imported only when the name is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tether.a2a.remote import RemoteAgent

__all__ = ["RemoteAgent"]


def __getattr__(name: str) -> Any:
    if name == "RemoteAgent":
        from tether.a2a.remote import RemoteAgent

        return RemoteAgent
    raise AttributeError(f"module 'tether.a2a' has no attribute {name!r}")
