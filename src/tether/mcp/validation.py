"""Validate a model's arguments against an MCP tool's input schema: untrusted input, bounded.

The schema comes from the server. Three rules keep it from reaching outside its own text
or holding the agent's event loop:

- ``$ref`` resolves only inside the schema (``#/$defs/...``, or an ``$id`` it declares)
  and against the JSON-Schema meta-schemas tether ships; a ``file:``, ``http:`` or any
  other reference is never fetched. An unresolvable or endlessly recursive reference
  is a tool error the model sees, not a failed run.
- ``pattern``, ``patternProperties`` (and the ``additionalProperties`` and draft
  2020-12 ``unevaluatedProperties`` that look at it) are matched with the ``regex``
  engine under a time bound: :data:`PATTERN_SECONDS` for all
  the matching one validation does. A pattern that takes longer (catastrophic
  backtracking) is stopped and the call is refused with a tool error.
- A pattern or a reference is named in an error cut to a few dozen characters.
"""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Iterator
from typing import Any

from tether.errors import ConfigurationError, ToolArgumentError

PATTERN_SECONDS = 0.1
"""What all the ``pattern`` matching of one validation may take, in seconds."""
_MAX_ERRORS = 5
_SHOWN = 60
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "tether_mcp_pattern_deadline", default=None
)


class SchemaRefusal(ToolArgumentError):
    """Validation stopped: the message says why (a pattern too slow, a bad reference).
    Caught inside this module and given to the model as a tool error."""


def schema_validator(schema: dict[str, Any], *, server: str, tool: str) -> SchemaValidator:
    """A validator of the model's arguments against the tool's JSON schema."""
    from jsonschema import validators  # type: ignore[import-untyped]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    if schema.get("type") != "object":
        raise ConfigurationError(
            f"MCP server {server!r} offers tool {tool!r} with an input schema whose type is "
            f"{schema.get('type')!r}, not 'object'; a model can only call it with an object: "
            f"leave it out with deny=[{tool!r}]"
        )
    try:
        cls = validators.validator_for(schema)
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ConfigurationError(
            f"MCP server {server!r} offers tool {tool!r} with an invalid input schema "
            f"({_cut(exc.message, 200)}); leave it out with deny=[{tool!r}]"
        ) from None
    # REGISTRY holds the meta-schemas in memory and retrieves nothing: any reference not
    # inside the schema or those is Unresolvable (jsonschema's default would fetch it).
    return SchemaValidator(_bounded(cls)(schema, registry=REGISTRY))


class SchemaValidator:
    """JSON-schema validation: it never coerces, so a person's edit (``strict``) is checked
    exactly like the model's arguments."""

    __slots__ = ("_validator",)

    def __init__(self, validator: Any) -> None:
        self._validator = validator

    def __call__(self, arguments: Any, tool_name: str) -> dict[str, Any]:
        from referencing.exceptions import Unresolvable

        from tether.tools.arguments import _as_dict

        if type(arguments) is not dict:
            arguments = _as_dict(arguments, tool_name)
        token = _DEADLINE.set(time.monotonic() + PATTERN_SECONDS)
        try:
            errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        except SchemaRefusal as exc:
            raise ToolArgumentError(f"tool {tool_name!r}: {exc}") from None
        except Unresolvable as exc:
            ref = str(getattr(exc, "ref", "") or "?")
            ref = _cut("#" + ref if ref.startswith("/") else ref, 200)  # a JSON pointer
            raise ToolArgumentError(
                f"tool {tool_name!r}: its input schema refers to {ref!r} ($ref), which tether "
                "does not resolve (only references inside the schema itself, such as "
                "'#/$defs/...', are followed; nothing is fetched); this tool cannot be called "
                "until its server fixes the schema"
            ) from None
        except RecursionError:
            raise ToolArgumentError(
                f"tool {tool_name!r}: its input schema's $ref refers to itself without end; "
                "this tool cannot be called until its server fixes the schema"
            ) from None
        finally:
            _DEADLINE.reset(token)
        if not errors:
            return dict(arguments)
        parts = [_explain(e) for e in errors[:_MAX_ERRORS]]
        if len(errors) > _MAX_ERRORS:
            parts.append(f"and {len(errors) - _MAX_ERRORS} more errors")
        raise ToolArgumentError(f"tool {tool_name!r}: " + "; ".join(parts))

    strict = __call__


def search(pattern: str, text: str) -> bool:
    """``regex.search(pattern, text)`` within what is left of this validation's time bound;
    raises SchemaRefusal past it, or for a pattern the engine cannot compile."""
    deadline = _DEADLINE.get()
    left = PATTERN_SECONDS if deadline is None else deadline - time.monotonic()
    shown = _cut(pattern, _SHOWN)
    if left <= 0:
        raise SchemaRefusal(_too_slow(shown))
    try:
        return _compiled(pattern).search(text, timeout=left) is not None
    except TimeoutError:
        raise SchemaRefusal(_too_slow(shown)) from None


def _too_slow(shown: str) -> str:
    return (
        f"matching an argument against the input schema's pattern {shown!r} took more than "
        f"{PATTERN_SECONDS:g} s, so tether stopped it (the pattern backtracks without bound); "
        "send a shorter or simpler value"
    )


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    import regex  # type: ignore[import-untyped]

    try:
        return regex.compile(pattern)
    except regex.error as exc:
        raise SchemaRefusal(
            f"the input schema's pattern {_cut(pattern, _SHOWN)!r} is not a regular "
            f"expression tether can match ({exc})"
        ) from None


@functools.cache
def _bounded(cls: Any) -> Any:
    """``cls`` with the keywords that match patterns replaced by bounded ones."""
    from jsonschema import _keywords, validators

    replaced = {
        name: keyword for name, keyword in _KEYWORDS.items() if cls.VALIDATORS.get(name) is not None
    }
    if cls.VALIDATORS.get("unevaluatedProperties") is _keywords.unevaluatedProperties:
        replaced["unevaluatedProperties"] = _unevaluated_properties  # draft 2020-12
    return validators.extend(cls, replaced)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = sorted(
        (
            key
            for key in instance
            if key not in properties and not any(search(p, key) for p in patterns)
        ),
        key=str,
    )
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        joined = ", ".join(repr(each) for each in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            shown = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """jsonschema's (draft 2020-12) keyword, with its patternProperties matching bounded."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    evaluated = set(_evaluated_keys(validator, instance, schema))
    left = []
    for key in instance:
        if key not in evaluated:
            for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key):
                left.append(key)
                break
    if left and unevaluated is False:
        extras = sorted(left, key=str)
        joined = ", ".join(repr(each) for each in extras)
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(
            f"Unevaluated properties are not allowed ({joined} {verb} unexpected)"
        )


def _evaluated_keys(validator: Any, instance: Any, schema: Any) -> list[Any]:
    """The keys of ``instance`` that ``schema`` evaluates (jsonschema's
    ``find_evaluated_property_keys_by_schema``, its pattern matching bounded)."""
    if validator.is_type(schema, "boolean"):
        return []
    keys: list[Any] = []

    def valid(errors: Iterator[Any]) -> bool:
        return next(errors, None) is None

    for ref_keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(ref_keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys += _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys += properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            keys += [k for k, v in instance.items() if valid(validator.descend(v, subschema))]
    for pattern in schema.get("patternProperties", {}):
        keys += [k for k in instance if search(pattern, k)]
    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            keys += _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if valid(validator.descend(instance, subschema)):
                keys += _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys += _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys += _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys += _evaluated_keys(validator, instance, schema["else"])
    return keys


_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def _explain(error: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path).lstrip(".")
    message = _cut(str(error.message), 200)
    return f"argument {path!r}: {message}" if path else message


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
