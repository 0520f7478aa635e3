"""Provider failures: the ``FailoverReason`` classifier and ``ProviderError``.

Adapters turn an SDK exception into an :class:`ErrorInfo` (status, body, code,
message, transport kind); :func:`classify` maps it to a reason, checking in this
order: provider-specific patterns, HTTP status, structured error codes, message
patterns, transport errors, "server disconnected with a large session", unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tether.errors import ModelError


class FailoverReason(StrEnum):
    AUTH = "auth"
    AUTH_PERMANENT = "auth_permanent"
    BILLING = "billing"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    TIMEOUT = "timeout"
    CONTEXT_OVERFLOW = "context_overflow"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    MODEL_NOT_FOUND = "model_not_found"
    FORMAT_ERROR = "format_error"
    THINKING_SIGNATURE = "thinking_signature"
    LONG_CONTEXT_TIER = "long_context_tier"
    UNKNOWN = "unknown"


R = FailoverReason

LARGE_SESSION_CHARS = 400_000
"""A request at least this large (about 100k tokens) that the server drops without
an answer is taken for a context overflow."""


@dataclass(slots=True)
class ErrorInfo:
    """What an adapter could read from one failed request."""

    provider: str
    status: int | None = None
    code: str = ""
    """Structured error code or type (``context_length_exceeded``, ``ThrottlingException``)."""
    message: str = ""
    body_text: str = ""
    retry_after: float | None = None
    transport: str = ""
    """``timeout``, ``connection`` or ``disconnected`` for failures below HTTP."""
    request_chars: int = 0


_PROVIDER_CODES: dict[str, R] = {
    # OpenAI
    "insufficient_quota": R.BILLING,
    "context_length_exceeded": R.CONTEXT_OVERFLOW,
    "model_not_found": R.MODEL_NOT_FOUND,
    "invalid_api_key": R.AUTH,
    "rate_limit_exceeded": R.RATE_LIMIT,
    # Anthropic
    "overloaded_error": R.OVERLOADED,
    "request_too_large": R.PAYLOAD_TOO_LARGE,
    # Bedrock
    "ThrottlingException": R.RATE_LIMIT,
    "ServiceQuotaExceededException": R.RATE_LIMIT,
    "ModelNotReadyException": R.OVERLOADED,
    "ServiceUnavailableException": R.OVERLOADED,
    "ModelTimeoutException": R.TIMEOUT,
    "ResourceNotFoundException": R.MODEL_NOT_FOUND,
    "AccessDeniedException": R.AUTH_PERMANENT,
    "UnrecognizedClientException": R.AUTH,
    "ExpiredTokenException": R.AUTH,
    "InternalServerException": R.SERVER_ERROR,
    "ModelErrorException": R.SERVER_ERROR,
    "ModelStreamErrorException": R.SERVER_ERROR,
    # Gemini (google.rpc status names and ErrorInfo reasons)
    "API_KEY_INVALID": R.AUTH,
    "UNAUTHENTICATED": R.AUTH,
    "RESOURCE_EXHAUSTED": R.RATE_LIMIT,
    "DEADLINE_EXCEEDED": R.TIMEOUT,
}

_PROVIDER_PATTERNS: list[tuple[re.Pattern[str], R]] = [
    (re.compile(r"thinking.*signature|signature.*thinking", re.I | re.S), R.THINKING_SIGNATURE),
    (re.compile(r"long[ -]context", re.I), R.LONG_CONTEXT_TIER),
    (
        re.compile(r"prompt is too long|input is too long|too many (input )?tokens", re.I),
        R.CONTEXT_OVERFLOW,
    ),
    (re.compile(r"credit balance is too low", re.I), R.BILLING),
    (re.compile(r"input token count.*exceeds the maximum", re.I | re.S), R.CONTEXT_OVERFLOW),
]

_STATUS: dict[int, R] = {
    401: R.AUTH,
    403: R.AUTH_PERMANENT,
    402: R.BILLING,
    408: R.TIMEOUT,
    413: R.PAYLOAD_TOO_LARGE,
    429: R.RATE_LIMIT,
    500: R.SERVER_ERROR,
    502: R.SERVER_ERROR,
    503: R.OVERLOADED,
    504: R.TIMEOUT,
    529: R.OVERLOADED,
}

_CODES: list[tuple[str, R]] = [
    ("context", R.CONTEXT_OVERFLOW),
    ("rate_limit", R.RATE_LIMIT),
    ("throttl", R.RATE_LIMIT),
    ("overloaded", R.OVERLOADED),
    ("not_found", R.MODEL_NOT_FOUND),
    ("authentication", R.AUTH),
    ("permission", R.AUTH_PERMANENT),
    ("billing", R.BILLING),
    ("quota", R.BILLING),
    ("too_large", R.PAYLOAD_TOO_LARGE),
    ("timeout", R.TIMEOUT),
    ("server_error", R.SERVER_ERROR),
    ("api_error", R.SERVER_ERROR),
]

_MESSAGES: list[tuple[re.Pattern[str], R]] = [
    (
        re.compile(
            r"context (length|window)|maximum context|reduce the length|too many tokens", re.I
        ),
        R.CONTEXT_OVERFLOW,
    ),
    (re.compile(r"rate.?limit|too many requests|slow down", re.I), R.RATE_LIMIT),
    (re.compile(r"overloaded|capacity", re.I), R.OVERLOADED),
    (re.compile(r"insufficient (credits|funds|balance)|billing|payment required", re.I), R.BILLING),
    (re.compile(r"model\b.*\b(not found|does not exist|not available)", re.I), R.MODEL_NOT_FOUND),
    (re.compile(r"too large|payload", re.I), R.PAYLOAD_TOO_LARGE),
    (re.compile(r"invalid api key|unauthori[sz]ed|incorrect api key", re.I), R.AUTH),
    (re.compile(r"timed? ?out", re.I), R.TIMEOUT),
]

FORMAT_CODE = "tether_malformed_response"
"""The code adapters give to a response they could not understand."""

_TRANSIENT_402 = re.compile(r"try again|resets? at|retry after|temporar", re.I)


def classify(info: ErrorInfo) -> FailoverReason:
    """Map one failure to a :class:`FailoverReason` (see the module docstring for the order)."""
    text = f"{info.message} {info.body_text}"
    if info.code == FORMAT_CODE:
        return R.FORMAT_ERROR
    if info.code in _PROVIDER_CODES:
        return _PROVIDER_CODES[info.code]
    for pattern, reason in _PROVIDER_PATTERNS:
        if pattern.search(text):
            return reason
    if info.status == 402 and _TRANSIENT_402.search(text):
        return R.RATE_LIMIT
    if info.status in _STATUS:
        return _STATUS[info.status]
    code = info.code.lower()
    if code:
        for part, reason in _CODES:
            if part in code:
                return reason
    for pattern, reason in _MESSAGES:
        if pattern.search(text):
            return reason
    if info.status in (400, 422):
        return R.FORMAT_ERROR
    if info.status == 404:
        return R.MODEL_NOT_FOUND
    if info.status is not None and info.status >= 500:
        return R.SERVER_ERROR
    if info.transport == "timeout":
        return R.TIMEOUT
    if info.transport == "disconnected" and info.request_chars >= LARGE_SESSION_CHARS:
        return R.CONTEXT_OVERFLOW
    if info.transport in ("connection", "disconnected"):
        return R.SERVER_ERROR
    return R.UNKNOWN


_ADVICE: dict[R, str] = {
    R.AUTH: "Check the API key (argument or {env}); pass api_keys=[...] to rotate keys.",
    R.AUTH_PERMANENT: "The key is valid but not allowed to use this model or endpoint; check the account's permissions.",
    R.BILLING: "The account is out of credit or quota; add credit or use another key or provider (FallbackChain).",
    R.RATE_LIMIT: "The provider is rate limiting; lower the request rate, add keys (api_keys=[...]) or raise RetryPolicy(max_attempts=...).",
    R.OVERLOADED: "The provider is overloaded; try later or add a FallbackChain.",
    R.SERVER_ERROR: "The provider failed; try later or add a FallbackChain.",
    R.TIMEOUT: "No answer in time; raise timeout=/RetryPolicy(stale_timeout=...) or check the server.",
    R.CONTEXT_OVERFLOW: "The conversation is too long for this model; an Agent compresses it unless Execution(context=KeepAll()) is set; otherwise pass compress=... or use a model with a larger context.",
    R.PAYLOAD_TOO_LARGE: "The request body is too large; an Agent compresses the conversation unless Execution(context=KeepAll()) is set; otherwise shorten tool results or attachments.",
    R.MODEL_NOT_FOUND: "Check the model name and that this account or server serves it.",
    R.FORMAT_ERROR: "The provider rejected the request or sent a malformed response; check the model's parameters and the server.",
    R.THINKING_SIGNATURE: "A reasoning block's signature was rejected even after dropping reasoning from the history.",
    R.LONG_CONTEXT_TIER: "This account's tier does not allow long-context requests; shorten the conversation or upgrade the tier.",
    R.UNKNOWN: "See the provider's message above.",
}


class ProviderError(ModelError):
    """A provider call failed for good: ``reason``, ``provider``, ``status``, ``attempts``."""

    def __init__(
        self,
        reason: FailoverReason,
        provider: str,
        detail: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        env_var: str | None = None,
        partial: bool = False,
    ) -> None:
        self.reason = reason
        self.provider = provider
        self.status = status
        self.attempts = attempts
        self.detail = detail
        self.partial = partial
        """True when part of the response had already been streamed to the caller."""
        where = f"HTTP {status}" if status is not None else "no HTTP status"
        advice = _ADVICE[reason].replace("{env}", env_var or "the provider's key variable")
        super().__init__(
            f"model {provider!r} failed ({reason.value}, {where}) after {attempts} "
            f"attempt(s): {detail}. {advice}"
        )


def snippet(value: Any, limit: int = 300) -> str:
    """A one-line excerpt of a provider body or message, for error texts."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit] + "..."


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` / ``retry-after-ms`` header value (seconds or HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    from time import time

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time())
