"""FallbackChain: try models in order when one fails for good."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Collection, Sequence
from contextlib import aclosing

from tether.errors import ConfigurationError, ModelError, TetherError
from tether.events import ModelFallback, ModelRetry, ModelStop, ModelStreamEvent
from tether.models.base import Model, ModelRequest
from tether.models.failover import FailoverReason, ProviderError


class FallbackChain:
    """A model that delegates to ``models[0]`` and falls back to the next on failure.

    After a fallback, the rest of that invocation's model calls go straight to the
    model that answered; the next invocation starts from the primary again. A
    model falls back when it raises a :class:`ProviderError` whose reason is in
    ``fallback_on`` (default: every reason) before it streamed any output; once
    output reached the caller, a failure ends the call. A model that fails with
    a plain exception (not a ``TetherError``) fails as a ``ProviderError`` with
    reason ``unknown``; one whose stream ends without a ``ModelStop``, with
    ``format_error``. Each switch yields a ``ModelFallback`` event.
    """

    def __init__(
        self,
        models: Sequence[Model],
        *,
        fallback_on: Collection[FailoverReason] | None = None,
        name: str | None = None,
    ) -> None:
        if not models:
            raise ConfigurationError("FallbackChain needs at least one model")
        for model in models:
            if not isinstance(model, Model):
                raise ConfigurationError(
                    f"FallbackChain takes Model objects, got {type(model).__name__}"
                )
        self.models = list(models)
        self.fallback_on = frozenset(fallback_on) if fallback_on is not None else None
        self._name = name or " -> ".join(m.name for m in self.models)
        self._current: dict[int, int] = {}  # invocation -> position of the model in use

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        last = len(self.models) - 1
        start = self._current.get(request.invocation, 0) if request.invocation else 0
        for position, model in enumerate(self.models):
            if position < start:
                continue
            delivered = False
            stopped = False
            try:
                async with aclosing(model.stream(request)) as events:
                    async for event in events:
                        kind = type(event)
                        if kind is ModelStop:
                            stopped = True
                        elif kind is not ModelRetry and kind is not ModelFallback:
                            delivered = True
                        yield event
                if stopped:
                    return
                error: ModelError = ProviderError(
                    FailoverReason.FORMAT_ERROR,
                    model.name,
                    "the stream ended without a stop event"
                    + (" after part of the response had been delivered" if delivered else ""),
                    partial=delivered,
                )
            except ModelError as exc:
                error = exc
            except TetherError:
                raise  # the caller's configuration, not the model
            except Exception as exc:  # a custom model's plain failure: classify it as unknown
                after = " after part of the response had been delivered" if delivered else ""
                error = ProviderError(
                    FailoverReason.UNKNOWN,
                    model.name,
                    f"{type(exc).__name__}: {exc}{after}",
                    partial=delivered,
                )
                error.__cause__ = exc
            reason = error.reason if isinstance(error, ProviderError) else FailoverReason.UNKNOWN
            partial = delivered or (isinstance(error, ProviderError) and error.partial)
            allowed = self.fallback_on is None or reason in self.fallback_on
            if position == last or partial or not allowed:
                raise error
            following = self.models[position + 1]
            if request.invocation:
                if len(self._current) >= 256:  # bounded: finished invocations age out
                    self._current.pop(next(iter(self._current)))
                self._current[request.invocation] = position + 1
            yield ModelFallback(model.name, following.name, reason.value, str(error))
