"""Reads failures raised by the ``google-genai`` SDK (and its HTTP layer) for the classifier.

An ``APIError`` carries the HTTP status, Google's status name (``RESOURCE_EXHAUSTED``,
``INVALID_ARGUMENT`` ...) and the ``details`` list, whose ``ErrorInfo.reason``
(``API_KEY_INVALID``) and ``RetryInfo.retryDelay`` (``"17s"``) say more. The
reason, when given, is the code :func:`tether.models.failover.classify` sees, else the
status name. Transport failures (httpx, aiohttp) are read like the other adapters'.
"""

from __future__ import annotations

from typing import Any

from tether.models.failover import FORMAT_CODE, ErrorInfo, parse_retry_after
from tether.models.sdk_errors import http_error_info


def gemini_error_info(exc: BaseException, provider: str, request_chars: int) -> ErrorInfo | None:
    """An ErrorInfo for a google-genai or transport exception, else None."""
    module = type(exc).__module__
    names = {cls.__name__ for cls in type(exc).__mro__}
    if module.startswith("google.genai") and "APIError" in names:
        return _api_error(exc, provider, request_chars)
    if module.startswith("google.genai") and "UnknownApiResponseError" in names:
        return ErrorInfo(provider, code=FORMAT_CODE, message=str(exc))
    if module.split(".")[0] == "aiohttp":
        info = ErrorInfo(provider, message=f"{type(exc).__name__}: {exc}")
        info.request_chars = request_chars
        joined = " ".join(names)
        if "Timeout" in joined:
            info.transport = "timeout"
        elif names & {"ServerDisconnectedError", "ClientPayloadError"}:
            info.transport = "disconnected"
        else:
            info.transport = "connection"
        return info
    return http_error_info(exc, provider, request_chars)


def _api_error(exc: Any, provider: str, request_chars: int) -> ErrorInfo:
    status = exc.code if isinstance(exc.code, int) and exc.code != 200 else None
    info = ErrorInfo(provider, status=status, request_chars=request_chars)
    info.message = str(exc.message or "") or str(exc)
    details = _details(exc.details)
    reason = next((d.get("reason") for d in details if d.get("reason")), None)
    info.code = str(reason or exc.status or "")
    delay = next((d.get("retryDelay") for d in details if d.get("retryDelay")), None)
    if isinstance(delay, str):
        info.retry_after = parse_retry_after(delay.removesuffix("s"))
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if info.retry_after is None and headers is not None:
        try:
            info.retry_after = parse_retry_after(headers.get("retry-after"))
        except Exception:  # a transport whose headers object is unusual
            info.retry_after = None
    if not info.message and exc.details is not None:
        info.body_text = str(exc.details)
    return info


def _details(body: Any) -> list[dict[str, Any]]:
    error = body.get("error", body) if isinstance(body, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    return [d for d in items if isinstance(d, dict)] if isinstance(items, list) else []
