"""What a request brings, bounded: its query parameters (a 400 naming the one that is
off) and its JSON body (413 past :data:`MAX_BODY`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

from starlette.exceptions import HTTPException

from tether.ops.server.json_body import parse_json

if TYPE_CHECKING:
    from starlette.requests import Request

MAX_BODY: Final = 64 * 1024
N = TypeVar("N", int, float)


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    """Query parameter ``name`` as an integer within ``low..high`` (``default`` if absent)."""
    value = _parsed(request, name, int, "an integer")
    if value is None:
        return default
    if not low <= value <= high:
        raise HTTPException(400, f"query parameter {name!r} must be within {low}..{high}")
    return value


def query_float(request: Request, name: str, default: float, high: float) -> float:
    """Query parameter ``name`` as a number within ``0..high`` (``default`` if absent)."""
    value = _parsed(request, name, float, "a number")
    if value is None:
        return default
    if not 0 <= value <= high:  # also refuses nan
        raise HTTPException(400, f"query parameter {name!r} must be within 0..{high:g}")
    return value


def _parsed(request: Request, name: str, convert: Callable[[str], N], what: str) -> N | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        return convert(raw)
    except ValueError:
        raise HTTPException(400, f"query parameter {name!r} must be {what}") from None


def query_choice(
    request: Request, name: str, choices: tuple[str, ...] | frozenset[str]
) -> str | None:
    """Query parameter ``name``, one of ``choices`` (None if absent)."""
    raw = request.query_params.get(name)
    if raw is not None and raw not in choices:
        raise HTTPException(400, f"query parameter {name!r} must be one of {sorted(choices)}")
    return raw


async def read_body(request: Request) -> Any:
    """The request body as JSON, refused past :data:`MAX_BODY` bytes while it arrives."""
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise HTTPException(413, f"the body is larger than {MAX_BODY} bytes")
    return parse_json(raw)
