"""Reads failures raised by the OpenAI and Anthropic SDKs (and their HTTP layer)."""

from __future__ import annotations

from typing import Any

from tether.models.failover import FORMAT_CODE, ErrorInfo, parse_retry_after


def http_error_info(exc: BaseException, provider: str, request_chars: int) -> ErrorInfo | None:
    """An ErrorInfo for an SDK or HTTP-transport exception, else None."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "JSONDecodeError" in names:
        return ErrorInfo(
            provider,
            code=FORMAT_CODE,
            message=f"the response stream held data that is not valid JSON ({exc})",
        )
    module = type(exc).__module__.split(".")[0]
    known = module in ("openai", "anthropic", "httpx", "httpx2", "httpcore", "h11")
    if not known and not names & {"TimeoutError", "ConnectionError"}:
        return None
    info = ErrorInfo(provider, request_chars=request_chars)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        info.status = status if status != 200 else None  # 200: an error event inside a stream
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        if headers is not None:
            retry_ms = headers.get("retry-after-ms")
            if retry_ms:
                seconds = parse_retry_after(retry_ms)
                info.retry_after = seconds / 1000 if seconds is not None else None
            else:
                info.retry_after = parse_retry_after(headers.get("retry-after"))
        _read_body(info, getattr(exc, "body", None), response)
        if not info.message:
            info.message = str(getattr(exc, "message", "") or exc)
        return info
    info.message = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__ or exc.__context__
    if cause is not None and module in ("openai", "anthropic"):
        names |= {cls.__name__ for cls in type(cause).__mro__}
        info.message += f" ({type(cause).__name__}: {cause})"
    if "Timeout" in " ".join(names) or "TimeoutError" in names:
        info.transport = "timeout"
    elif names & {"RemoteProtocolError", "ReadError", "ProtocolError", "LocalProtocolError"}:
        info.transport = "disconnected"
    elif names & {"APIConnectionError", "ConnectError", "ConnectionError", "TransportError"}:
        info.transport = "disconnected" if "disconnect" in str(exc).lower() else "connection"
    elif names & {"APIResponseValidationError", "JSONDecodeError"}:
        info.code = FORMAT_CODE
    elif module in ("openai", "anthropic"):
        info.transport = "connection"
    else:
        return None
    return info


def _read_body(info: ErrorInfo, body: Any, response: Any) -> None:
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = error.get("code") or error.get("type") or ""
        info.code = str(code) if code else ""
        message = error.get("message")
        if isinstance(message, str):
            info.message = message
    elif isinstance(body, str):
        info.body_text = body
    if not info.body_text and not info.message:
        try:
            info.body_text = str(response.text) if response is not None else ""
        except Exception:  # a streamed response whose body was not read
            info.body_text = ""
