"""ProviderModel: the retry, rotation, compression and stale-stream loop every adapter shares.

An adapter implements ``_attempt`` (one request, streamed as normalized events)
and ``_error_info`` (what a failed request said). ``stream`` owns recovery:
backoff retries, Retry-After, credential rotation, the context compression hook,
dropping reasoning after a rejected thinking signature, and clear final errors.
Every failure of a call except a :class:`TetherError` (the caller's configuration)
ends as a :class:`ProviderError`; an exception the adapter does not recognise
(an undecodable stream, a chunk of the wrong shape) is reason ``unknown``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from types import ModuleType
from typing import Any

from tether.errors import ConfigurationError, TetherError
from tether.events import ModelRetry, ModelStop, ModelStreamEvent
from tether.messages import Message, ReasoningBlock, TextBlock, ToolResult
from tether.models.base import ModelRequest
from tether.models.failover import (
    FORMAT_CODE,
    ErrorInfo,
    FailoverReason,
    ProviderError,
    classify,
    snippet,
)
from tether.models.retry import RetryPolicy, StaleStreamError, Watchdog
from tether.pricing import cost_of, look_up, looked_up

CompressHook = Callable[[ModelRequest], ModelRequest | Awaitable[ModelRequest]]
"""Called when the provider refuses a request as too long (context overflow, payload too
large, long-context tier) with the failed request; returns a shorter one."""

log = logging.getLogger("tether.models")
"""One warning per retried attempt: a slow call says why it is slow."""
R = FailoverReason
_BACKOFF = frozenset({R.RATE_LIMIT, R.OVERLOADED, R.SERVER_ERROR, R.TIMEOUT, R.UNKNOWN})
_ROTATE = frozenset({R.AUTH, R.BILLING, R.RATE_LIMIT})
MAX_COMPRESSIONS = 2
_TOO_LONG = frozenset({R.CONTEXT_OVERFLOW, R.PAYLOAD_TOO_LARGE, R.LONG_CONTEXT_TIER})


class ResponseFormatError(TetherError):
    """The provider answered with something the adapter cannot use (empty, malformed)."""


class StreamBrokenError(TetherError):
    """The response stream ended before the provider said it was complete."""


class ProviderReportedError(TetherError):
    """A failure the provider reported inside an HTTP 200 response (a stream's error
    event); the adapter's ``_error_info`` reads its ``code`` and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ProviderModel:
    """Base class of the SDK adapters (see the module docstring)."""

    provider = "provider"
    env_var: str | None = None

    def __init__(
        self,
        model: str,
        *,
        api_keys: Sequence[str] = (),
        retry: RetryPolicy | None = None,
        compress: CompressHook | None = None,
        context_window: int | None = None,
    ) -> None:
        if not model or not isinstance(model, str):
            raise ConfigurationError(f"{type(self).__name__} needs a model name, got {model!r}")
        self.model = model
        self.retry = retry or RetryPolicy()
        self.compress = compress
        self.context_window = check_window(type(self).__name__, context_window)
        """Tokens the model accepts (None: its family's default, see tether.context.window)."""
        self._cached_in_input = bool(getattr(self, "cached_in_input", False))
        self._keys: list[str | None] = list(api_keys) or [None]
        self._key_index = 0

    @property
    def name(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def api_key(self) -> str | None:
        """The key in use (rotation moves on after auth, billing or rate-limit failures)."""
        return self._keys[self._key_index]

    def _attempt(
        self, request: ModelRequest, api_key: str | None
    ) -> AsyncGenerator[ModelStreamEvent, None]:
        raise NotImplementedError

    def _error_info(self, exc: BaseException, request: ModelRequest) -> ErrorInfo | None:
        """Describe a failed request, or None if the adapter does not recognise ``exc``
        (the call then fails as ``unknown``)."""
        raise NotImplementedError

    def _hint(self, reason: FailoverReason) -> str:
        """Adapter advice appended to a failure's detail ("" for none)."""
        return ""

    async def stream(self, request: ModelRequest) -> AsyncGenerator[ModelStreamEvent, None]:
        policy = self.retry
        attempt = 0
        tried_keys = {self._key_index}
        compressions = 0
        reasoning_dropped = False
        while True:
            attempt += 1
            delivered = False
            watchdog = Watchdog(policy.stale_timeout)
            try:
                async with aclosing(self._attempt(request, self.api_key)) as events:
                    iterator = events.__aiter__()
                    while True:
                        watchdog.last = watchdog.loop.time()
                        watchdog.waiting = True
                        try:
                            event = await iterator.__anext__()
                        except StopAsyncIteration:
                            break
                        except asyncio.CancelledError:
                            if watchdog.swallow():
                                raise StaleStreamError(
                                    f"the stream was silent for more than {policy.stale_timeout:g} s"
                                ) from None
                            raise
                        finally:
                            watchdog.waiting = False
                        if type(event) is ModelStop:
                            if not looked_up(self.provider, self.model):
                                await look_up(self.provider, self.model)
                            event.usage.cost = cost_of(
                                self.provider, self.model, event.usage, self._cached_in_input
                            )
                        elif type(event) is not ModelRetry:
                            delivered = True
                        yield event
                return
            except (GeneratorExit, asyncio.CancelledError, ProviderError):
                raise
            except Exception as exc:
                if isinstance(exc, TetherError) and not isinstance(exc, _ADAPTER_FAILURES):
                    raise  # the caller's configuration, not the provider
                info = self._describe(exc, request)
                reason = classify(info)
                detail = _detail(info, exc) + self._hint(reason)
                if delivered:
                    raise ProviderError(
                        reason,
                        self.name,
                        f"the stream broke after part of the response had been delivered "
                        f"({detail}); the partial response was discarded",
                        status=info.status,
                        attempts=attempt,
                        env_var=self.env_var,
                        partial=True,
                    ) from exc
                failed = ProviderError(
                    reason,
                    self.name,
                    detail,
                    status=info.status,
                    attempts=attempt,
                    env_var=self.env_var,
                )
                if attempt >= policy.max_attempts:
                    raise failed from exc
                delay: float | None = None
                if reason in _ROTATE and len(self._keys) > len(tried_keys):
                    self._key_index = (self._key_index + 1) % len(self._keys)
                    while self._key_index in tried_keys:
                        self._key_index = (self._key_index + 1) % len(self._keys)
                    tried_keys.add(self._key_index)
                    delay = 0.0
                elif reason in _BACKOFF:
                    delay = policy.backoff(attempt)
                    if info.retry_after is not None:
                        if info.retry_after > policy.max_retry_after:
                            raise ProviderError(
                                reason,
                                self.name,
                                f"{detail}; the server asked to wait {info.retry_after:g} s, "
                                f"more than RetryPolicy.max_retry_after={policy.max_retry_after:g}",
                                status=info.status,
                                attempts=attempt,
                                env_var=self.env_var,
                            ) from exc
                        delay = info.retry_after
                elif reason in _TOO_LONG and self.compress and compressions < MAX_COMPRESSIONS:
                    compressions += 1
                    request = await _compressed(self.compress, request)
                    delay = 0.0
                elif reason is R.THINKING_SIGNATURE and not reasoning_dropped:
                    reasoning_dropped = True
                    request = without_reasoning(request)
                    delay = 0.0
                if delay is None:
                    raise failed from exc
                log.warning(
                    "model %s: attempt %d of %d failed (%s): %s; retrying in %.1f s",
                    self.name,
                    attempt,
                    policy.max_attempts,
                    reason.value,
                    detail,
                    delay,
                )
                yield ModelRetry(attempt, reason.value, delay, self.name, detail)
                if delay > 0:
                    await asyncio.sleep(delay)
            finally:
                watchdog.stop()

    def _describe(self, exc: Exception, request: ModelRequest) -> ErrorInfo:
        """What ``exc`` says about the call; an exception no adapter knows is ``unknown``."""
        if isinstance(exc, StaleStreamError):
            return ErrorInfo(self.provider, message=str(exc), transport="timeout")
        if isinstance(exc, ResponseFormatError):
            return ErrorInfo(self.provider, code=FORMAT_CODE, message=str(exc))
        if isinstance(exc, StreamBrokenError):
            return ErrorInfo(
                self.provider,
                message=str(exc),
                transport="disconnected",
                request_chars=request_size(request),
            )
        info = self._error_info(exc, request)
        if info is None:
            info = ErrorInfo(
                self.provider,
                message=f"unexpected {type(exc).__name__}: {exc}",
                request_chars=request_size(request),
            )
        return info


_ADAPTER_FAILURES = (
    StaleStreamError,
    ResponseFormatError,
    StreamBrokenError,
    ProviderReportedError,
)
"""tether's own names for provider failures: classified, never passed through."""


def _detail(info: ErrorInfo, exc: BaseException) -> str:
    text = info.message or f"{type(exc).__name__}: {exc}"
    if info.body_text and info.body_text not in text:
        text = f"{text}; body: {info.body_text}"
    code = f"[{info.code}] " if info.code and info.code != FORMAT_CODE else ""
    return code + snippet(text)


async def _compressed(hook: CompressHook, request: ModelRequest) -> ModelRequest:
    result = hook(request)
    if inspect.isawaitable(result):
        result = await result
    if not isinstance(result, ModelRequest):
        raise ConfigurationError(
            f"the compress hook must return a ModelRequest, got {type(result).__name__}"
        )
    return result


def check_window(owner: str, window: int | None) -> int | None:
    """Validate a ``context_window=`` argument."""
    if window is not None and (
        isinstance(window, bool) or not isinstance(window, int) or window < 1
    ):
        raise ConfigurationError(
            f"{owner}(context_window=...) must be a number of tokens >= 1 or None, got {window!r}"
        )
    return window


def without_reasoning(request: ModelRequest) -> ModelRequest:
    """The request with every reasoning block removed from its history."""
    messages = [
        Message(m.role, [b for b in m.content if type(b) is not ReasoningBlock], m.usage)
        for m in request.messages
    ]
    return replace(request, messages=messages)


def request_size(request: ModelRequest) -> int:
    """Approximate size of a request in characters."""
    size = len(request.system_prompt or "")
    for message in request.messages:
        for block in message.content:
            if type(block) is TextBlock or type(block) is ReasoningBlock:
                size += len(block.text)
            elif type(block) is ToolResult:
                size += len(block.content)
            else:
                size += 64
    return size


def resolve_keys(
    owner: str, env_var: str, api_key: str | None, api_keys: Sequence[str], hint: str = ""
) -> list[str]:
    """The API keys of a provider model: the argument(s), else ``env_var``; never empty."""
    keys = [api_key] if api_key else list(api_keys)
    if not keys and os.environ.get(env_var):
        keys = [os.environ[env_var]]
    if not keys:
        raise ConfigurationError(
            f"{owner} has no API key: set the {env_var} environment variable or pass "
            f"api_key=...{hint}"
        )
    return keys


def import_sdk(module: str, owner: str, extra: str) -> ModuleType:
    """Import a provider SDK, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigurationError(
            f"{owner} needs the {module} SDK: pip install 'tether[{extra}]'"
        ) from exc


def sdk_clients(
    client_class: Any,
    keys: Sequence[str],
    base_url: str | None,
    default_headers: Mapping[str, str] | None,
    timeout: float,
) -> list[Any]:
    """One SDK client per API key (for rotation), with the SDK's own retries off."""
    return [
        client_class(
            api_key=key,
            base_url=base_url,
            default_headers=dict(default_headers or {}),
            timeout=timeout,
            max_retries=0,
        )
        for key in keys
    ]
