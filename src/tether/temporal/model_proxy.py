"""The model a workflow's agent calls: each call is one activity on the real model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any, Final

from tether.events import ModelStreamEvent
from tether.models.base import ModelRequest
from tether.models.failover import ProviderError
from tether.temporal.wire import decode, encode

MODEL_ACTIVITY: Final = "tether.model"
MODEL_TIMEOUT: Final = timedelta(minutes=10)


class ActivityModel:
    """A tether ``Model`` whose ``stream`` runs the real model in an activity (the worker's
    agent, built by the factory) and replays its events here. The activity retries only
    what Temporal lost (a worker that died); a provider's own failure comes back as the
    same :class:`~tether.models.ProviderError`, for the loop's fallback and stop rules."""

    def __init__(self, name: str, session_id: str, path: tuple[str, ...] = ()) -> None:
        self.name = name
        self._session_id = session_id
        self._path = path

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        from temporalio import workflow
        from temporalio.common import RetryPolicy
        from temporalio.exceptions import ActivityError, ApplicationError

        payload = {
            "session_id": self._session_id,
            "path": list(self._path),
            "request": encode(request),
        }
        try:
            answer: dict[str, Any] = await workflow.execute_activity(
                MODEL_ACTIVITY,
                payload,
                start_to_close_timeout=MODEL_TIMEOUT,
                retry_policy=RetryPolicy(
                    maximum_attempts=3, non_retryable_error_types=["ProviderError"]
                ),
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) and cause.type == "ProviderError":
                raise provider_error(cause.details[0] if cause.details else {}) from None
            raise
        for event in decode(answer["events"]):
            yield event


def provider_error(data: Any) -> ProviderError:
    """The :class:`~tether.models.ProviderError` an activity reported as ``data``."""
    from tether.models.failover import FailoverReason

    info = data if isinstance(data, dict) else {}
    try:
        reason = FailoverReason(str(info.get("reason")))
    except ValueError:
        reason = FailoverReason.UNKNOWN
    status = info.get("status")
    return ProviderError(
        reason,
        str(info.get("provider", "model")),
        str(info.get("detail", "")),
        status=status if isinstance(status, int) else None,
        attempts=int(info.get("attempts", 1) or 1),
        partial=bool(info.get("partial", False)),
    )


def provider_error_data(exc: Any) -> dict[str, Any]:
    """What :func:`provider_error` rebuilds: the error's fields."""
    return {
        "reason": exc.reason.value,
        "provider": exc.provider,
        "detail": exc.detail,
        "status": exc.status,
        "attempts": exc.attempts,
        "partial": exc.partial,
    }
