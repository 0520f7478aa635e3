"""Validate the arguments a model sent to a tool; explain failures in short, model-readable text.

Imports pydantic_core, so like :mod:`tether.tools.schema` it is only imported when a
tool is created.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic_core import ErrorDetails, ValidationError

from tether.errors import ToolArgumentError

_MAX_ERRORS = 5
_MAX_SHOWN = 60
_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean (true or false)",
    "bool_parsing": "a boolean (true or false)",
    "string_type": "a string",
    "list_type": "an array",
    "tuple_type": "an array",
    "set_type": "an array",
    "frozen_set_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
}
_JSON_KINDS: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
}


class Validates(Protocol):
    """What a Tool validates its arguments with: the model's (``__call__``, which may
    coerce) and a person's edit (``strict``, which never does)."""

    def __call__(self, arguments: Any, tool_name: str) -> dict[str, Any]: ...

    def strict(self, arguments: dict[str, Any], tool_name: str) -> dict[str, Any]: ...


class ArgumentValidator:
    """Turns raw arguments (a dict or a JSON string) into validated keyword arguments.

    ``validate`` is a pydantic validator built once per tool; ``expected`` holds a
    precomputed description ("an integer or an array") for union-typed arguments.
    """

    __slots__ = ("_expected", "_strict", "_validate", "parameters")

    def __init__(
        self,
        validate: Callable[[Any], dict[str, Any]],
        *,
        parameters: tuple[str, ...],
        expected: dict[str, str],
        strict: Callable[[Any], dict[str, Any]] | None = None,
    ) -> None:
        self._validate = validate
        self._strict = strict
        self.parameters = parameters
        self._expected = expected

    def __call__(self, arguments: Any, tool_name: str) -> dict[str, Any]:
        """Validate ``arguments``; raise ToolArgumentError naming the tool and the fields."""
        if type(arguments) is not dict:
            arguments = _as_dict(arguments, tool_name)
        try:
            return self._validate(arguments)
        except ValidationError as exc:
            raise ToolArgumentError(self._explain(exc, arguments, tool_name)) from None

    def strict(self, arguments: dict[str, Any], tool_name: str) -> dict[str, Any]:
        """Validate JSON ``arguments`` without coercion (``42`` is not ``"42"``, ``"[1]"``
        is not a list): how a person's edit is checked. ToolArgumentError names the fields."""
        if self._strict is None:
            return self(arguments, tool_name)
        try:
            return self._strict(arguments)
        except ValidationError as exc:
            raise ToolArgumentError(self._explain(exc, arguments, tool_name)) from None
        except ValueError as exc:  # not JSON at all (NaN is refused by json.dumps' caller)
            raise ToolArgumentError(f"tool {tool_name!r}: arguments are not JSON: {exc}") from None

    def _explain(self, exc: ValidationError, arguments: dict[str, Any], tool_name: str) -> str:
        errors = exc.errors(include_url=False)
        parts: list[str] = []
        extras = [str(e["loc"][0]) for e in errors if _is_extra(e)]
        if extras:
            parts.append(self._unexpected(extras))
        explained_unions: set[str] = set()
        for error in errors:
            loc = error["loc"]
            top = str(loc[0]) if loc else ""
            if _is_extra(error):
                continue
            if top in self._expected and not (error["type"] == "missing" and len(loc) == 1):
                # A union fails once per member; one summary reads better than N errors.
                if top not in explained_unions:
                    explained_unions.add(top)
                    got = _show(arguments.get(top))
                    parts.append(f"argument {top!r}: expected {self._expected[top]}, got {got}")
                continue
            parts.append(_describe(error))
        if len(parts) > _MAX_ERRORS:
            parts[_MAX_ERRORS:] = [f"and {len(parts) - _MAX_ERRORS} more errors"]
        return f"tool {tool_name!r}: " + "; ".join(parts)

    def _unexpected(self, extras: list[str]) -> str:
        noun = "argument" if len(extras) == 1 else "arguments"
        names = ", ".join(repr(name) for name in extras)
        if self.parameters:
            return f"unexpected {noun} {names} (expected arguments: {', '.join(self.parameters)})"
        return f"unexpected {noun} {names} (this tool takes no arguments)"


def _as_dict(arguments: Any, tool_name: str) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            parsed = json.loads(arguments)
            if isinstance(parsed, str) and parsed.strip()[:1] == "{":
                parsed = json.loads(parsed)  # the object was JSON-encoded twice
        except json.JSONDecodeError as exc:
            raise ToolArgumentError(
                f"tool {tool_name!r}: arguments are not valid JSON "
                f"({exc.msg}: line {exc.lineno} column {exc.colno})"
            ) from None
        arguments = parsed
    if isinstance(arguments, Mapping):
        return dict(arguments)
    kind = _JSON_KINDS.get(type(arguments), type(arguments).__name__)
    raise ToolArgumentError(f"tool {tool_name!r}: arguments must be a JSON object, got {kind}")


def _is_extra(error: ErrorDetails) -> bool:
    return error["type"] == "extra_forbidden" and len(error["loc"]) == 1


def _describe(error: ErrorDetails) -> str:
    path = _path(error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"argument {path!r} is required"
    expected = _EXPECTED.get(kind)
    if expected is None:
        message = error["msg"]
        if not message.startswith("Input should be "):
            message = message.removeprefix("Value error, ")
            return f"argument {path!r}: {message[:1].lower()}{message[1:]}"
        expected = message.removeprefix("Input should be ")
    return f"argument {path!r}: expected {expected}, got {_show(error['input'])}"


def _path(loc: tuple[int | str, ...]) -> str:
    text = str(loc[0]) if loc else ""
    for part in loc[1:]:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."
