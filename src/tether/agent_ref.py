"""AgentRef: what the engine, hook events, tools and tracing see of "the agent this happens in".

The engine never needs the :class:`~tether.agent.Agent` class: it runs a runtime on a
conversation. ``event.agent`` and ``ToolContext.agent`` are an ``AgentRef``: the Agent
itself for a top-level run, a view with the child's runtime under its parent's for a
sub-agent call. User code that needs the Agent's own methods keeps a reference to it.

This module imports nothing of tether's but the message types: hook events, tool
contexts and policies name the agent without tying themselves to the engine's modules
(``runtime`` and ``conversation`` are typed loosely for that reason; the engine itself
reads the typed ``RunState.runtime``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tether.messages import Message


class AgentRef(Protocol):
    """The agent a run, hook event or tool call happens in."""

    @property
    def name(self) -> str | None:
        """The agent's name (None: unnamed)."""
        ...

    @property
    def path(self) -> str:
        """Its path in an agent tree (``""`` at the top)."""
        ...

    @property
    def session_id(self) -> str: ...

    @property
    def state(self) -> dict[str, Any]:
        """The session state tools read and write."""
        ...

    @property
    def messages(self) -> list[Message]: ...

    @property
    def conversation(self) -> Any:
        """The session's state (a :class:`tether.conversation.Conversation`): messages,
        state, answers, the running run."""
        ...

    @property
    def runtime(self) -> Any:
        """What this run runs with (a :class:`tether.runtime.Runtime`: model, tools,
        hooks, policy, store...)."""
        ...

    def cancel(self) -> None:
        """Stop the running invocation at the next check (thread-safe)."""
        ...

    def steer(self, text: str) -> None:
        """Add guidance to the running invocation (thread-safe)."""
        ...
