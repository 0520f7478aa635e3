"""The exceptions tether raises. Every message says what happened, where, and what to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.result import Result


class TetherError(Exception):
    """Base class of every error tether raises."""


class ConfigurationError(TetherError, ValueError):
    """The agent or a component was configured in a way that cannot work."""


class AgentBusyError(TetherError):
    """An invocation was started while another one is running on the same agent."""


class SessionStateError(TetherError):
    """The session is not in a state that allows the request (e.g. resume of a finished run)."""


class ScriptExhaustedError(TetherError):
    """A ScriptedModel was called more times than it has turns."""


class ToolArgumentError(TetherError):
    """Tool arguments from the model could not be parsed or validated.

    Never escapes the loop: the message goes back to the model as a tool error.
    """


class RunError(TetherError):
    """The run ended with stop reason ``error``; ``result`` holds what was produced."""

    result: Result | None = None


class HookError(RunError):
    """A hook callback (or an intervention handler with ``on_error="throw"``) raised."""


class ModelError(RunError):
    """The model failed or produced a response the loop cannot use."""


class RetryLimitError(RunError):
    """A hook or intervention asked for more retries than the configured bound."""


class PersistenceError(RunError):
    """The session journal could not be written; what was acknowledged before is kept."""


class ToolLoopError(RunError):
    """The model kept calling tools that do not exist."""
