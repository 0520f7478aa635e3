"""The API's JSON answers: never cached, and one shape for every error."""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import JSONResponse

from tether.durable.errors import CorruptEntry

NO_STORE: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def ok(data: Any) -> JSONResponse:
    """A JSON answer that no browser or proxy keeps."""
    return JSONResponse(data, headers=NO_STORE)


def error(
    code: int, message: str, *, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    """``{"error": message, **extra}`` with status ``code``."""
    return JSONResponse(
        {"error": message, **extra}, status_code=code, headers={**NO_STORE, **(headers or {})}
    )


def not_readable(session_id: str, exc: Exception) -> JSONResponse:
    """One answer for a journal the server cannot show: a row the store cannot decode
    (CorruptEntry) or a decoded entry the session fold cannot use."""
    detail = str(exc) if isinstance(exc, CorruptEntry) else repr(exc)
    return error(
        422,
        f"session {session_id!r} has a journal entry tether cannot read: {detail}; "
        "the session cannot be shown or resumed until the entry is repaired",
        session_id=session_id,
        entry=exc.seq if isinstance(exc, CorruptEntry) else None,
    )
