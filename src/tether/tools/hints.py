"""Questions about parameter type hints, asked once when a tool is built."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Annotated, Any, Literal

from tether.tools.context import ToolContext


def is_context(annotation: Any) -> bool:
    """The parameter receives the ToolContext (``ToolContext`` or ``ToolContext | None``)."""
    members = _union_members(annotation)
    if members is not None:
        return any(_strip_annotated(m) is ToolContext for m in members)
    return _strip_annotated(annotation) is ToolContext


def is_choice(annotation: Any) -> bool:
    """A union of two or more non-None types (``X | None`` alone validates like ``X``)."""
    members = _union_members(annotation) or ()
    return sum(member is not type(None) for member in members) >= 2


def accepts_text(annotation: Any) -> bool:
    """True when a plain string is a valid value, so it must not be parsed as JSON."""
    members = _union_members(annotation)
    if members is not None:
        return any(accepts_text(m) for m in members)
    annotation = _strip_annotated(annotation)
    if annotation is Any or annotation is object:
        return True
    if typing.get_origin(annotation) is Literal:
        return any(isinstance(v, str) for v in typing.get_args(annotation))
    return isinstance(annotation, type) and issubclass(annotation, str | bytes | Enum)


def may_be_container(annotation: Any) -> bool:
    """The value may be a JSON object or array (collections, models, dataclasses)."""
    members = _union_members(annotation)
    if members is not None:
        return any(may_be_container(m) for m in members)
    annotation = _strip_annotated(annotation)
    origin = typing.get_origin(annotation) or annotation
    if not isinstance(origin, type):
        return False
    if issubclass(origin, str | bytes | bytearray):
        return False
    return issubclass(origin, Mapping | Iterable) or dataclasses.is_dataclass(origin)


def _strip_annotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = annotation.__origin__
    return annotation


def _union_members(annotation: Any) -> tuple[Any, ...] | None:
    annotation = _strip_annotated(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return None
