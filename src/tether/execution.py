"""Execution: the rarely changed knobs of how an Agent runs, grouped out of its constructor."""

from __future__ import annotations

from dataclasses import dataclass

from tether.context.policy import ContextManager
from tether.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class Execution:
    """How an agent executes its steps (``Agent(execution=Execution(...))``).

    - ``max_concurrency``: tool calls of one batch that run at once, and the size
      of the thread pool for sync tools.
    - ``max_retries``: how often hooks may ask to retry one model call or tool call
      before the run fails with ``RetryLimitError``.
    - ``lease_ttl``: seconds a durable session's lease lasts without a heartbeat
      (another process may take the session over after that).
    - ``buffer_output``: hold model text and reasoning deltas until the
      ``AfterModelCall`` / ``BeforeOutput`` verdicts; ``None`` means on exactly when
      AGENT-HOOKS interceptors are attached.
    - ``context``: the context manager that keeps the conversation inside the
      model's window (``tether.context``: ``Summarizing``, ``SlidingWindow``,
      ``KeepAll``); ``None`` means ``Summarizing()`` with the agent's own model,
      which acts only when a request nears 80% of the window.
    """

    max_concurrency: int = 8
    max_retries: int = 3
    lease_ttl: float = 30.0
    buffer_output: bool | None = None
    context: ContextManager | None = None

    def __post_init__(self) -> None:
        if _not_int(self.max_concurrency) or self.max_concurrency < 1:
            raise ConfigurationError(
                f"Execution(max_concurrency=...) must be an int >= 1, got {self.max_concurrency!r}"
            )
        if _not_int(self.max_retries) or self.max_retries < 0:
            raise ConfigurationError(
                f"Execution(max_retries=...) must be an int >= 0, got {self.max_retries!r}"
            )
        if self.context is not None and not isinstance(self.context, ContextManager):
            raise ConfigurationError(
                "Execution(context=...) takes a context manager (tether.context.Summarizing, "
                f"SlidingWindow, KeepAll or a ContextManager subclass), got {self.context!r}"
            )
        ttl = self.lease_ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
            raise ConfigurationError(
                f"Execution(lease_ttl=...) must be a positive number of seconds, got {ttl!r}"
            )


def _not_int(value: object) -> bool:
    return isinstance(value, bool) or not isinstance(value, int)
