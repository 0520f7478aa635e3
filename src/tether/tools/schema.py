"""Build a tool's JSON schema and argument validator from a function signature.

This module imports pydantic and docstring_parser at its top, so it is only
imported lazily, when a tool is created (see :class:`tether.tools.base.Tool`).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import docstring_parser
import typing_extensions
from pydantic import (
    BeforeValidator,
    ConfigDict,
    PydanticUserError,
    TypeAdapter,
    ValidationInfo,
    with_config,
)
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from tether.errors import ConfigurationError
from tether.tools.arguments import ArgumentValidator
from tether.tools.hints import accepts_text, is_choice, is_context, may_be_container

# Lax validation, plus numbers accepted where a string is expected (models send 42 for "42").
_CONFIG = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
# What a person typed is checked strictly: JSON types as the schema says, nothing coerced.
_STRICT = {"strict": True}
# Keys whose values are data, not sub-schemas: never strip "title" inside them.
_DATA_KEYS = frozenset({"default", "const", "enum", "examples", "example"})
# Keys whose values map names to sub-schemas: the names themselves are not schema keywords.
_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_UNSUPPORTED_KINDS = {
    inspect.Parameter.VAR_POSITIONAL: "*{}",
    inspect.Parameter.VAR_KEYWORD: "**{}",
    inspect.Parameter.POSITIONAL_ONLY: "{} (positional-only)",
}


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """What a tool learns from its function: description, JSON schema and validator."""

    description: str
    input_schema: dict[str, Any]
    parameters: tuple[str, ...]
    context_param: str | None
    validator: ArgumentValidator


_CACHE: dict[tuple[Any, ...], FunctionSchema] = {}
_CACHE_SIZE = 512


def build_function_schema(
    fn: Callable[..., Any], tool_name: str, description: str | None = None
) -> FunctionSchema:
    """Inspect ``fn`` once and build everything a :class:`Tool` needs per call.

    A function defined inside a factory (an agent built per session, say) is a
    new object each time but the same code: its schema is built once and reused.
    Raises TypeError for signatures a model cannot call (``*args``, ``**kwargs``,
    positional-only parameters, unresolvable type hints, several ToolContext parameters).
    """
    key = _cache_key(fn, tool_name, description)
    if key is not None:
        cached = _CACHE.get(key)
        if cached is not None:
            return cached
    built = _build(fn, tool_name, description)
    if key is not None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = built
    return built


def _cache_key(fn: Any, tool_name: str, description: str | None) -> tuple[Any, ...] | None:
    """Everything the schema depends on, or None when some part is unhashable."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    annotations = fn.__annotations__
    if any(isinstance(a, str) for a in annotations.values()):
        try:  # names resolve to the objects they mean now, which the key must hold
            annotations = typing.get_type_hints(fn, include_extras=True)
        except Exception:  # the real build reports it
            return None
    try:
        key = (
            code,
            id(getattr(fn, "__globals__", None)),
            fn.__defaults__,
            tuple(sorted((fn.__kwdefaults__ or {}).items())),
            tuple(annotations.items()),
            fn.__doc__,
            tool_name,
            description,
        )
        hash(key)
    except TypeError:
        return None
    return key


def _build(fn: Callable[..., Any], tool_name: str, description: str | None) -> FunctionSchema:
    signature = inspect.signature(fn)
    hints = _type_hints(fn, tool_name)
    docs = docstring_parser.parse(inspect.getdoc(fn) or "")
    arg_docs = _argument_docs(docs)

    fields: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    union_fields: list[str] = []
    context_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in _UNSUPPORTED_KINDS:
            shown = _UNSUPPORTED_KINDS[param.kind].format(param.name)
            raise ConfigurationError(
                f"tool {tool_name!r}: parameter {shown} is not supported; "
                "a tool takes named parameters only (the model sends a JSON object)"
            )
        annotation = hints.get(param.name, Any)
        if is_context(annotation):
            if context_param is not None:
                raise ConfigurationError(
                    f"tool {tool_name!r}: only one parameter may be annotated ToolContext, "
                    f"got {context_param!r} and {param.name!r}"
                )
            context_param = param.name
            continue
        if isinstance(param.default, FieldInfo):
            raise ConfigurationError(
                f"tool {tool_name!r}: parameter {param.name!r} uses a pydantic Field() as its "
                "default; write `name: Annotated[type, Field(...)] = default` instead"
            )
        if is_choice(annotation):
            union_fields.append(param.name)
        if not accepts_text(annotation) and may_be_container(annotation):
            annotation = Annotated[annotation, BeforeValidator(_parse_json_text)]
        if param.default is inspect.Parameter.empty:
            fields[param.name] = typing_extensions.Required[annotation]
        else:
            fields[param.name] = typing_extensions.NotRequired[annotation]
            defaults[param.name] = param.default

    # mypy rejects the functional TypedDict form with computed fields.
    make_typed_dict: Any = typing_extensions.TypedDict
    arguments_type = with_config(_CONFIG)(make_typed_dict("ToolArguments", fields))
    try:
        adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(arguments_type)
        raw_schema = adapter.json_schema()
    except PydanticUserError as exc:  # e.g. a parameter type pydantic cannot handle
        raise _unsupported(tool_name, fields, hints) from exc
    input_schema = _clean_schema(raw_schema, defaults, arg_docs)
    core = adapter.validator
    validator = ArgumentValidator(
        core.validate_python,
        strict=lambda args: core.validate_json(json.dumps(args), strict=True, context=_STRICT),
        parameters=tuple(fields),
        expected=_describe_unions(input_schema, union_fields),
    )
    return FunctionSchema(
        description=description or (docs.description or "").strip() or tool_name,
        input_schema=input_schema,
        parameters=tuple(fields),
        context_param=context_param,
        validator=validator,
    )


SUPPORTED_TYPES = (
    "str, int, float, bool, None, bytes, decimal.Decimal, datetime/date/time/timedelta, "
    "uuid.UUID, pathlib.Path, Enum and Literal, list/tuple/set/dict of those, Optional and "
    "unions, TypedDict, dataclasses and pydantic models"
)


def _unsupported(
    tool_name: str, fields: dict[str, Any], hints: dict[str, Any]
) -> ConfigurationError:
    """Name the first parameter whose type has no JSON schema, and what would work."""
    make_typed_dict: Any = typing_extensions.TypedDict
    for name, annotation in fields.items():
        probe = with_config(_CONFIG)(make_typed_dict("Probe", {name: annotation}))
        try:
            TypeAdapter(probe).json_schema()
        except PydanticUserError:
            shown = getattr(hints.get(name), "__name__", None) or repr(hints.get(name))
            return ConfigurationError(
                f"tool {tool_name!r}: parameter {name!r} has type {shown}, which cannot be "
                f"described to the model as JSON. Supported types: {SUPPORTED_TYPES}. Change "
                "the annotation (e.g. to a dataclass or pydantic model of supported fields)."
            )
    return ConfigurationError(
        f"tool {tool_name!r}: its parameters cannot be described as a JSON schema. "
        f"Supported types: {SUPPORTED_TYPES}."
    )


def _type_hints(fn: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    target: Any = fn
    while isinstance(target, functools.partial):
        target = target.func
    if not inspect.isroutine(target) and callable(target) and not isinstance(target, type):
        target = type(target).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError as exc:
        raise ConfigurationError(
            f"tool {tool_name!r}: cannot resolve the type hint {exc.name!r}; "
            "define or import it at module level"
        ) from exc
    except TypeError:  # builtins and other objects without annotations
        return {}


def _argument_docs(docs: docstring_parser.Docstring) -> dict[str, str]:
    result: dict[str, str] = {}
    for param in docs.params:
        if not param.description:
            continue
        for name in param.arg_name.split(","):  # NumPy style allows "a, b : int"
            result[name.strip()] = param.description.strip()
    return result


def _parse_json_text(value: Any, info: ValidationInfo) -> Any:
    """Parse a JSON object/array sent as a string where a structured value is expected
    (a model's habit; a person's edit, checked strictly, must send the structure itself)."""
    if type(value) is str and not (info.context or {}).get("strict"):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value  # validation reports the type error with the original text
    return value


def _clean_schema(
    raw: dict[str, Any], defaults: dict[str, Any], arg_docs: dict[str, str]
) -> dict[str, Any]:
    _drop_titles(raw)
    properties: dict[str, Any] = raw.get("properties", {})
    for name, prop in properties.items():
        if name in arg_docs and "description" not in prop:
            prop["description"] = arg_docs[name]
        if name in defaults and "default" not in prop:
            # A default that has no JSON form is simply not advertised.
            with contextlib.suppress(Exception):
                prop["default"] = to_jsonable_python(defaults[name])
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if raw.get("required"):
        schema["required"] = raw["required"]
    if "$defs" in raw:
        schema["$defs"] = raw["$defs"]
    return schema


def _drop_titles(node: dict[str, Any]) -> None:
    if isinstance(node.get("title"), str):
        del node["title"]
    for key, value in node.items():
        if key in _DATA_KEYS:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                if isinstance(sub, dict):
                    _drop_titles(sub)
        elif isinstance(value, dict):
            _drop_titles(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    _drop_titles(item)


_JSON_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


def _describe_unions(schema: dict[str, Any], names: list[str]) -> dict[str, str]:
    """Precompute "an integer or an array" for union arguments (used in error messages)."""
    defs: dict[str, Any] = schema.get("$defs", {})
    result: dict[str, str] = {}
    for name in names:
        prop = schema["properties"][name]
        kinds: list[str] = []
        for option in prop.get("anyOf", [prop]):
            kind = _describe_kind(option, defs)
            if kind not in kinds:
                kinds.append(kind)
        result[name] = " or ".join(kinds)
    return result


def _describe_kind(option: dict[str, Any], defs: dict[str, Any]) -> str:
    ref = option.get("$ref")
    if isinstance(ref, str):
        option = defs.get(ref.rpartition("/")[2], {})
    if "enum" in option:
        return " or ".join(json.dumps(v) for v in option["enum"])
    if "const" in option:
        return json.dumps(option["const"])
    return _JSON_TYPE_NAMES.get(option.get("type", ""), "any value")
