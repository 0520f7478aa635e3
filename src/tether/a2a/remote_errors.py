"""The error a remote A2A agent's call ends with when its task does not complete."""

from __future__ import annotations

from tether.errors import SubAgentError


class RemoteAgentError(SubAgentError):
    """A remote A2A task failed, was rejected or canceled, or could not be reached; the
    calling agent's model gets it as the tool error (the remote state is named)."""
